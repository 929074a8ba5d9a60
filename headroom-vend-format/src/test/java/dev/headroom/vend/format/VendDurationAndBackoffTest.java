package dev.headroom.vend.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Seed 003: {@code {value, unit}} spans ("Data (Response)") and "Backoff Strategy". */
class VendDurationAndBackoffTest {

  @ParameterizedTest
  @CsvSource({"0,0,second", "1,1,second", "47,47,second", "60,1,minute", "90,90,second", "120,2,minute",
      "3600,1,hour", "5400,90,minute", "7200,2,hour", "86400,1,day", "172800,2,day", "90000,25,hour"})
  void ofSeconds_picksTheLargestUnitThatDividesExactly(long seconds, long value, String unit) {
    VendDuration d = VendDuration.ofSeconds(seconds);
    assertThat(d.value()).isEqualTo(value);
    assertThat(d.unit().token()).isEqualTo(unit);
    assertThat(d.toDuration()).isEqualTo(Duration.ofSeconds(seconds));
    assertThat(VendDuration.fromJson("window", d.toJson())).isEqualTo(d);
  }

  @Test
  void of_roundsAFractionOfASecondUp() {
    assertThat(VendDuration.of(Duration.ofMillis(59_001))).isEqualTo(VendDuration.ofSeconds(60));
  }

  @Test
  void fromJson_namesTheField() {
    assertThatThrownBy(() -> VendDuration.fromJson("retry_after", Fixtures.tree("{\"value\":-1,\"unit\":\"second\"}")))
        .hasMessage("retry_after.value: expected an integer of zero or more, got number -1");
    assertThatThrownBy(() -> VendDuration.fromJson("window", Fixtures.tree("{\"value\":1,\"unit\":\"week\"}")))
        .hasMessage("window.unit: expected second, minute, hour or day, got \"week\"");
    assertThatThrownBy(() -> VendDuration.fromJson("window", Fixtures.tree("5")))
        .hasMessageStartingWith("window: expected an object");
    assertThat(VendDuration.fromJson("w", Fixtures.tree("{\"value\":2,\"unit\":\"minutes\"}")).toDuration())
        .isEqualTo(Duration.ofMinutes(2));
  }

  @ParameterizedTest
  @CsvSource({"23,0,23", "23,1,46", "23,2,92", "23,3,184", "23,4,300", "23,40,300", "23,2147483647,300",
      "400,0,300", "0,0,1", "0,3,8"})
  void waitTime_isMinOfRetryAfterTimesTwoToTheAttemptAndMaxWait(long retryAfter, int attempt, long expected) {
    assertThat(VendBackoff.waitTime(retryAfter, attempt, VendBackoff.DEFAULT_MAX_WAIT)).isEqualTo(Duration.ofSeconds(expected));
  }

  @Test
  void waitTime_saturatesAtHugeMaxWait_andRefusesNegatives() {
    Duration huge = Duration.ofSeconds(Long.MAX_VALUE);
    assertThat(VendBackoff.waitTime(Duration.ofSeconds(1), 62, huge)).isEqualTo(Duration.ofSeconds(1L << 62));
    assertThat(VendBackoff.waitTime(Duration.ofSeconds(1), 63, huge)).isEqualTo(huge);
    assertThat(VendBackoff.waitTime(Duration.ofMillis(1500), 1, Duration.ofMinutes(1))).isEqualTo(Duration.ofSeconds(3));
    assertThatThrownBy(() -> VendBackoff.waitTime(Duration.ofSeconds(-1), 0, huge)).hasMessage("retryAfter: expected zero or more, got PT-1S");
    assertThatThrownBy(() -> VendBackoff.waitTime(1, -1, huge)).hasMessage("attempt: expected 0 or more, got -1");
    assertThat(VendBackoff.waitTime(5, 0, Duration.ZERO)).isEqualTo(Duration.ZERO);
  }
}
