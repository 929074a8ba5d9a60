package dev.headroom.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.net.ssl.SSLSession;
import org.junit.jupiter.api.Test;

/**
 * The server's clock against the client's, from {@code Date} (RFC 9110 section 6.6.1), and an epoch
 * {@code X-RateLimit-Reset} read through it (draft-ietf-httpapi-ratelimit-headers-09 section 7).
 * Times in milliseconds.
 */
class ServerClockTest {

  private static final long MS = 1_000_000L;

  @Test
  void answersEitherSideOfTheServersSecondBoundaryNarrowTheOffsetAndTheReset() {
    ServerClock clock = new ServerClock();
    assertThat(clock.known()).isFalse();
    clock.observe(20_000 * MS, 10_400 * MS, 10_450 * MS);
    assertThat(clock.latest(25_000 * MS)).isEqualTo(15_450 * MS);
    assertThat(clock.earliest(25_000 * MS)).isEqualTo(13_400 * MS);
    clock.observe(21_000 * MS, 10_700 * MS, 10_720 * MS);
    assertThat(clock.known()).isTrue();
    // Offset in [10.28, 10.60) s: the reset named by 25 s is in (13.40, 14.72] on the client's clock.
    assertThat(clock.latest(25_000 * MS)).isEqualTo(14_720 * MS);
    assertThat(clock.earliest(25_000 * MS)).isEqualTo(13_400 * MS);
  }

  @Test
  void aResetNoLaterThanItsDateProvesTruncationOnlyForARequestSentAfterIt() {
    ServerClock clock = new ServerClock();
    clock.observe(20_000 * MS, 10_000 * MS, 10_000 * MS);
    // Offset in [10.00, 11.00) s. Sent at 10.999 s (server 20.999 s at least), dated 21 s, reset 21 s:
    // decided before a reset rounded up to 21 s and dated after it. Nothing proven.
    clock.observe(21_000 * MS, 10_999 * MS, 11_001 * MS);
    assertThat(clock.observeReset(21_000 * MS, 21_000 * MS, 10_999 * MS)).isFalse();
    assertThat(clock.latest(26_000 * MS)).isEqualTo(16_000 * MS);
    // Sent at 11.000 s (server 21.000 s at least) and still told 21 s: the server truncates.
    clock.observe(21_000 * MS, 11_000 * MS, 11_002 * MS);
    assertThat(clock.observeReset(21_000 * MS, 21_000 * MS, 11_000 * MS)).isTrue();
    assertThat(clock.truncates()).isTrue();
    // 26 s now names an instant in [26, 27) s on the server's clock: (15.00, 17.00] on the client's.
    assertThat(clock.latest(26_000 * MS)).isEqualTo(17_000 * MS);
    assertThat(clock.earliest(26_000 * MS)).isEqualTo(15_000 * MS);
    assertThat(clock.observeReset(22_000 * MS, 22_000 * MS, 12_000 * MS)).as("learnt once").isFalse();
  }

  @Test
  void answersThatContradictTheOthersStartAgainFromTheLatest() {
    ServerClock clock = new ServerClock();
    clock.observe(20_000 * MS, 10_400 * MS, 10_450 * MS);
    // The server's clock jumped an hour: no offset fits both.
    clock.observe(3_620_000 * MS, 10_500 * MS, 10_510 * MS);
    assertThat(clock.latest(3_625_000 * MS)).isEqualTo((3_625_000 - 3_620_000 + 10_510) * MS);
    assertThat(clock.earliest(3_625_000 * MS)).isEqualTo((3_625_000 - 1_000 - 3_621_000 + 10_500) * MS);
  }

  @Test
  void onlyOneValidDateAndOneEpochSecondsResetAreRead() {
    assertThat(ServerClock.date(response(Map.of("Date", List.of("Tue, 24 Nov 2026 06:29:18 GMT")))))
        .isEqualTo(1_795_501_758L * 1_000_000_000L);
    assertThat(ServerClock.date(response(Map.of("Date", List.of("yesterday"))))).isEqualTo(Long.MIN_VALUE);
    assertThat(ServerClock.date(response(Map.of("Date", List.of("Tue, 24 Nov 2026 06:29:18 GMT",
        "Tue, 24 Nov 2026 06:29:19 GMT"))))).isEqualTo(Long.MIN_VALUE);
    assertThat(ServerClock.date(response(Map.of()))).isEqualTo(Long.MIN_VALUE);
    assertThat(ServerClock.epochReset(response(Map.of("X-RateLimit-Reset", List.of("1795501760")))))
        .isEqualTo(1_795_501_760L * 1_000_000_000L);
    for (String notEpochSeconds : List.of("60", "1795501760000", "-1795501760", "1795501760.5", "", "99999999999999")) {
      assertThat(ServerClock.epochReset(response(Map.of("X-RateLimit-Reset", List.of(notEpochSeconds)))))
          .as(notEpochSeconds).isEqualTo(Long.MIN_VALUE);
    }
  }

  private static HttpResponse<Void> response(Map<String, List<String>> headers) {
    HttpHeaders h = HttpHeaders.of(headers, (k, v) -> true);
    return new HttpResponse<>() {
      @Override
      public int statusCode() {
        return 200;
      }

      @Override
      public HttpRequest request() {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1/")).build();
      }

      @Override
      public Optional<HttpResponse<Void>> previousResponse() {
        return Optional.empty();
      }

      @Override
      public HttpHeaders headers() {
        return h;
      }

      @Override
      public Void body() {
        return null;
      }

      @Override
      public Optional<SSLSession> sslSession() {
        return Optional.empty();
      }

      @Override
      public URI uri() {
        return request().uri();
      }

      @Override
      public HttpClient.Version version() {
        return HttpClient.Version.HTTP_1_1;
      }
    };
  }
}
