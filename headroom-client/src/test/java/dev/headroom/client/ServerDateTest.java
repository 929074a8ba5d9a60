package dev.headroom.client;

import static dev.headroom.client.Scripted.client;
import static dev.headroom.client.Scripted.gaps;
import static dev.headroom.client.Scripted.get;
import static dev.headroom.client.Scripted.ok;
import static dev.headroom.client.Scripted.script;
import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.ManualTicker;
import dev.headroom.http.RetryAfter;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Instant;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * The response's {@code Date} (draft-09 section 7: a client may use it "to better estimate the reset
 * parameter moment intended by the server"): instants the server states are read against its own
 * clock, so a server whose clock is an hour off still gets the wait it asked for; relative values
 * ({@code t}, delay-seconds) still run from the receipt. Loopback server, virtual time.
 */
class ServerDateTest {

  private final ManualTicker ticker = ManualTicker.atFixedInstant();

  private List<Double> run(Supplier<TestServer.Reply> first) throws Exception {
    try (TestServer server = new TestServer(ticker, script(List.of(first, Scripted::ok)))) {
      HeadroomClient c = client(ticker).retry(RetryPolicy.none()).build();
      for (int i = 0; i < 2; i++) {
        c.send(get(server, "/api/items"), BodyHandlers.discarding());
      }
      return gaps(server);
    }
  }

  @Test
  void aRetryAfterDateFromAServerAnHourBehindIsReadAgainstItsDate() throws Exception {
    Instant serverNow = ticker.instant().minusSeconds(3600);
    // Against the client's clock this date is an hour past: no wait at all.
    List<Double> gaps = run(() -> ok().header("Date", RetryAfter.formatHttpDate(serverNow))
        .header("Retry-After", RetryAfter.formatHttpDate(serverNow.plusSeconds(30))));
    assertThat(gaps).containsExactly(30.0);
  }

  @Test
  void anEpochResetFromAServerAnHourAheadIsReadAgainstItsDate() throws Exception {
    Instant serverNow = ticker.instant().plusSeconds(3600);
    // Against the client's clock this reset is 3620 s away, past the ten-minute ceiling.
    List<Double> gaps = run(() -> ok().header("Date", RetryAfter.formatHttpDate(serverNow))
        .header("X-RateLimit-Limit", "10").header("X-RateLimit-Remaining", "0")
        .header("X-RateLimit-Reset", Long.toString(serverNow.getEpochSecond() + 20)));
    assertThat(gaps).containsExactly(20.0);
  }

  @Test
  void aRelativeResetStillRunsFromTheReceipt() throws Exception {
    List<Double> gaps = run(() -> ok().header("Date", "Mon, 01 Jan 0001 00:00:00 GMT")
        .header("RateLimit", "\"default\";r=0;t=5"));
    assertThat(gaps).containsExactly(5.0);
  }

  @Test
  void withoutAValidDateTheClientsClockIsTheReference() throws Exception {
    List<Double> gaps = run(() -> ok().header("Date", "yesterday")
        .header("Retry-After", RetryAfter.formatHttpDate(ticker.instant().plusSeconds(7))));
    assertThat(gaps).containsExactly(7.0);
  }

  @Test
  void aHostileDateIsBoundedByTheCeilings() throws Exception {
    // A Date in year 1 makes a Retry-After date eight thousand years away: waited for up to maxRetryAfter.
    List<Double> gaps = run(() -> ok().header("Date", "Mon, 01 Jan 0001 00:00:00 GMT")
        .header("Retry-After", RetryAfter.formatHttpDate(ticker.instant())));
    assertThat(gaps).containsExactly((double) Ceilings.DEFAULT_MAX_RETRY_AFTER.toSeconds());
  }
}
