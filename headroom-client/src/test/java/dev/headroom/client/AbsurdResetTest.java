package dev.headroom.client;

import static dev.headroom.client.Scripted.client;
import static dev.headroom.client.Scripted.gaps;
import static dev.headroom.client.Scripted.get;
import static dev.headroom.client.Scripted.ok;
import static dev.headroom.client.Scripted.script;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.headroom.ManualTicker;
import dev.headroom.Ticker;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * draft-ietf-httpapi-ratelimit-headers-09 section 8.5.1 ("a high reset parameter value could inhibit
 * clients to contact the server ... implementing retries when the reset parameter exceeds ten
 * minutes"): a reset beyond {@link Ceilings#maxReset()} is not slept on. The requests it would hold
 * go one at a time, each alone, and what each answer says (its fields, a refusal's Retry-After)
 * decides for the next. Once in virtual time, once on the system clock.
 */
class AbsurdResetTest {

  /** A valid Structured Field Integer (RFC 9651 section 3.3.1) of fourteen digits: about 3 million years. */
  static final String FOURTEEN_DIGITS = "99999999999999";

  private final ManualTicker ticker = ManualTicker.atFixedInstant();
  private final List<Duration> waits = Collections.synchronizedList(new ArrayList<>());

  private final Scheduler recording = Scripted.recording(ticker, waits);

  /** Four callers send {@code n} requests in all, each its next when its last is answered. */
  private static List<Integer> fourCallers(HeadroomClient client, TestServer server, int n) throws Exception {
    AtomicInteger issued = new AtomicInteger();
    List<Integer> statuses = Collections.synchronizedList(new ArrayList<>());
    List<CompletableFuture<Void>> callers = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      callers.add(caller(client, server, issued, n, statuses));
    }
    CompletableFuture.allOf(callers.toArray(CompletableFuture[]::new)).get();
    return statuses;
  }

  private static CompletableFuture<Void> caller(HeadroomClient client, TestServer server, AtomicInteger issued, int n,
      List<Integer> statuses) {
    if (issued.getAndIncrement() >= n) {
      return CompletableFuture.completedFuture(null);
    }
    return client.sendAsync(get(server, "/api/items"), BodyHandlers.discarding())
        .thenAccept(r -> statuses.add(r.statusCode()))
        .thenCompose(v -> caller(client, server, issued, n, statuses));
  }

  @Test
  void aFourteenDigitTWithoutAPolicyDoesNotStallThirtyRequestsFromFourCallers() throws Exception {
    for (String remaining : List.of("0", "9")) {
      waits.clear();
      try (TestServer server = new TestServer(ticker,
          req -> ok().header("RateLimit", "\"default\";r=" + remaining + ";t=" + FOURTEEN_DIGITS))) {
        HeadroomClient client = client(ticker).scheduler(recording).build();
        List<Integer> statuses = assertTimeoutPreemptively(Duration.ofSeconds(30), () -> fourCallers(client, server, 30));
        assertThat(statuses).as("r=%s", remaining).hasSize(30).containsOnly(200);
        assertThat(server.log()).hasSize(30);
        // Nothing slept on the clamped reset: every request went after the answer before it.
        assertThat(waits).as("r=%s", remaining).isEmpty();
        assertThat(gaps(server)).containsOnly(0.0);
      }
    }
  }

  @Test
  void anEpochResetMillionsOfYearsAwayIsProbedToo() throws Exception {
    try (TestServer server = new TestServer(ticker, req -> ok().header("X-RateLimit-Limit", "10")
        .header("X-RateLimit-Remaining", "0").header("X-RateLimit-Reset", FOURTEEN_DIGITS))) {
      HeadroomClient client = client(ticker).scheduler(recording).build();
      List<Integer> statuses = assertTimeoutPreemptively(Duration.ofSeconds(30), () -> fourCallers(client, server, 12));
      assertThat(statuses).hasSize(12).containsOnly(200);
      assertThat(waits).isEmpty();
    }
  }

  @Test
  void aProbesRefusalIsWaitedForByItsRetryAfter() throws Exception {
    List<Supplier<TestServer.Reply>> replies = List.of(
        () -> ok().header("RateLimit", "\"default\";r=0;t=" + FOURTEEN_DIGITS),
        () -> TestServer.Reply.of(429).header("Retry-After", "7").header("RateLimit", "\"default\";r=0;t=" + FOURTEEN_DIGITS),
        Scripted::ok);
    try (TestServer server = new TestServer(ticker, script(replies))) {
      HeadroomClient client = client(ticker).scheduler(recording).build();
      for (int i = 0; i < 3; i++) {
        assertThat(client.send(get(server, "/api/items"), BodyHandlers.discarding()).statusCode()).isEqualTo(200);
      }
      // The second request probes at once and is refused; its retry waits the Retry-After, then the
      // third goes at once: its answer carried no fields.
      assertThat(gaps(server)).containsExactly(0.0, 7.0, 0.0);
    }
  }

  @Test
  void theThresholdIsSetThroughTheBuilder() throws Exception {
    Ceilings hour = Ceilings.builder().maxReset(Duration.ofHours(1)).build();
    try (TestServer server = new TestServer(ticker, script(List.of(
        () -> ok().header("RateLimit", "\"default\";r=0;t=1800"),
        () -> ok().header("RateLimit", "\"default\";r=0;t=7200"),
        Scripted::ok)))) {
      HeadroomClient client = client(ticker).scheduler(recording).ceilings(hour).build();
      for (int i = 0; i < 3; i++) {
        client.send(get(server, "/api/items"), BodyHandlers.discarding());
      }
      // Half an hour is within the threshold and waited for; two hours is beyond it and probed at once.
      assertThat(gaps(server)).containsExactly(1800.0, 0.0);
    }
  }

  @Test
  void onTheSystemClockThirtyRequestsFromFourCallersAllGo() throws Exception {
    try (TestServer server = new TestServer(Ticker.system(),
        req -> ok().header("RateLimit", "\"default\";r=0;t=" + FOURTEEN_DIGITS))) {
      HeadroomClient client = HeadroomClient.builder(Scripted.HTTP).build();
      List<Integer> statuses = assertTimeoutPreemptively(Duration.ofSeconds(60), () -> fourCallers(client, server, 30));
      assertThat(statuses).hasSize(30).containsOnly(200);
      assertThat(server.log()).hasSize(30);
      assertThat(client.budgets().snapshot(get(server, "/api/items")))
          .allSatisfy(b -> assertThat(b.reset()).isLessThanOrEqualTo(Ceilings.DEFAULT_MAX_RESET));
    }
  }
}
