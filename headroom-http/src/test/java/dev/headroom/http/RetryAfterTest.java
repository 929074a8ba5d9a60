package dev.headroom.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** RFC 9110 section 10.2.3 (Retry-After) and section 5.6.7 (the three HTTP-date forms). */
class RetryAfterTest {

  static final Instant NOW = Instant.parse("1994-11-06T08:49:00Z");

  @Test
  void delaySeconds() {
    assertThat(RetryAfter.parse("120", NOW).orElseThrow().delay()).isEqualTo(Duration.ofSeconds(120));
    assertThat(RetryAfter.parse(" 0 ", NOW).orElseThrow().delay()).isZero();
    assertThat(RetryAfter.parse("120", NOW).orElseThrow().date()).isEmpty();
  }

  @Test
  void hugeDelaySaturatesAt2To31_rfc9111s1_2_2() {
    assertThat(RetryAfter.parse("99999999999999999999999999999", NOW).orElseThrow().delaySeconds())
        .isEqualTo(RetryAfter.MAX_DELAY_SECONDS);
  }

  @ParameterizedTest
  @ValueSource(strings = {"Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"})
  void allThreeHttpDateFormsRelativeToTheInjectedClock_rfc9110s5_6_7(String value) {
    RetryAfter ra = RetryAfter.parse(value, NOW).orElseThrow();
    assertThat(ra.delay()).isEqualTo(Duration.ofSeconds(37));
    assertThat(ra.date()).contains(Instant.parse("1994-11-06T08:49:37Z"));
  }

  @Test
  void rfc850YearMoreThan50YearsAheadIsThePreviousCentury() {
    Instant now = Instant.parse("2030-01-01T00:00:00Z");
    assertThat(RetryAfter.parseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT", now)).contains(Instant.parse("1994-11-06T08:49:37Z"));
    assertThat(RetryAfter.parseHttpDate("Thursday, 06-Nov-31 08:49:37 GMT", now)).contains(Instant.parse("2031-11-06T08:49:37Z"));
  }

  @Test
  void aDateInThePastIsNoWaitAndALeapSecondIsAccepted() {
    assertThat(RetryAfter.parse("Sun, 06 Nov 1994 08:00:00 GMT", NOW).orElseThrow().delay()).isZero();
    assertThat(RetryAfter.parse("Sat, 31 Dec 2016 23:59:60 GMT", NOW)).isPresent();
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "-1", "1.5", "soon", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 31 Feb 1994 08:49:37 GMT",
      "sun, 06 nov 1994 08:49:37 gmt", "Sun, 06 Nov 1994 25:49:37 GMT", "120 120"})
  void malformedValuesAreEmptyNotExceptions(String value) {
    assertThat(RetryAfter.parse(value, NOW)).isEmpty();
  }

  @Test
  void formatsDelayRoundedUpAndImfFixdate() {
    assertThat(RetryAfter.formatDelaySeconds(Duration.ofMillis(1001))).isEqualTo("2");
    assertThat(RetryAfter.formatHttpDate(Instant.parse("1994-11-06T08:49:37Z"))).isEqualTo("Sun, 06 Nov 1994 08:49:37 GMT");
    assertThat(RetryAfter.ofDelay(Duration.ofSeconds(5)).toDelaySeconds()).isEqualTo("5");
  }
}
