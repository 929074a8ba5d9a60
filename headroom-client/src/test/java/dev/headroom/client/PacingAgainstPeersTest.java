package dev.headroom.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Algorithm;
import dev.headroom.ManualTicker;
import dev.headroom.http.headers.HeaderDialect;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A client asked for far more than the allowed rate is never refused once a response has told it
 * the limits (draft-09 section 7: "A client SHOULD NOT exceed the quota units conveyed by the
 * remaining parameter before the time window expressed in the reset parameter"), against every
 * peer dialect, with both pacing strategies. Time is virtual: server and client share a
 * {@link ManualTicker}, and the client waits with {@link Scheduler#advancing}.
 */
class PacingAgainstPeersTest {

  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final int QUOTA = 10;
  private static final Duration WINDOW = Duration.ofSeconds(10);
  private static final int REQUESTS = 32;

  static Stream<Arguments> peers() {
    List<Peers.Peer> peers = List.of(
        new Peers.Peer("express-rate-limit draft-6", Peers::expressDraft6),
        new Peers.Peer("express-rate-limit draft-7", Peers::expressDraft7),
        new Peers.Peer("express-rate-limit draft-8", Peers::expressDraft8),
        new Peers.Peer("cloudflare", Peers::cloudflare),
        new Peers.Peer("github", Peers::github),
        // ietf (draft-10 and -11): t until more quota; draft-09: t until the quota is whole again.
        new Peers.Peer("headroom ietf token bucket", Peers.headroom(HeaderDialect.IETF, Algorithm.TOKEN_BUCKET)),
        new Peers.Peer("headroom ietf sliding window", Peers.headroom(HeaderDialect.IETF, Algorithm.SLIDING_WINDOW)),
        new Peers.Peer("headroom draft-09 token bucket", Peers.headroom(HeaderDialect.DRAFT_09, Algorithm.TOKEN_BUCKET)),
        new Peers.Peer("headroom ietf fixed window", Peers.headroom(HeaderDialect.IETF, Algorithm.FIXED_WINDOW)),
        new Peers.Peer("headroom draft-07", Peers.headroom(HeaderDialect.DRAFT_07, Algorithm.FIXED_WINDOW)),
        new Peers.Peer("headroom draft-06", Peers.headroom(HeaderDialect.DRAFT_06, Algorithm.SLIDING_WINDOW)),
        new Peers.Peer("headroom draft-03", Peers.headroom(HeaderDialect.DRAFT_03, Algorithm.FIXED_WINDOW)),
        new Peers.Peer("headroom x-ratelimit", Peers.headroom(HeaderDialect.X_RATELIMIT, Algorithm.TOKEN_BUCKET)));
    List<Arguments> out = new ArrayList<>();
    for (Peers.Peer p : peers) {
      for (Pacing pacing : Pacing.values()) {
        out.add(Arguments.of(p, pacing));
      }
    }
    return out.stream();
  }

  @ParameterizedTest(name = "{0}, {1}, sequential")
  @MethodSource("peers")
  void sequentialCallerIsNeverRefusedAfterTheFirstHeaders(Peers.Peer peer, Pacing pacing) throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    try (TestServer server = new TestServer(ticker, peer.factory().create(ticker, QUOTA, WINDOW))) {
      HeadroomClient client = client(ticker, pacing);
      long start = ticker.read();
      for (int i = 0; i < REQUESTS; i++) {
        HttpResponse<String> r = client.send(HttpRequest.newBuilder(server.uri("/api/items")).build(), BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
      }
      assertThat(server.count(429)).as("refusals").isZero();
      assertThat(server.log()).hasSize(REQUESTS);
      // No needless stall (such as a ten-minute probe wait): a sliding window's t is up to two
      // windows (the estimate reaches zero only then), so a client obeying it takes up to twice the
      // minimum; fixed windows and token buckets take about the minimum (see HeadroomPacingBenchmark).
      Duration elapsed = Duration.ofNanos(ticker.read() - start);
      assertThat(elapsed).isLessThanOrEqualTo(WINDOW.multipliedBy(3L * REQUESTS / QUOTA));
    }
  }

  @ParameterizedTest(name = "{0}, {1}, concurrent")
  @MethodSource("peers")
  void concurrentCallerIsNeverRefusedAfterTheFirstHeaders(Peers.Peer peer, Pacing pacing) throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    SteppingScheduler scheduler = new SteppingScheduler(ticker);
    try (TestServer server = new TestServer(ticker, peer.factory().create(ticker, QUOTA, WINDOW))) {
      HeadroomClient client = HeadroomClient.builder(HTTP).ticker(ticker).scheduler(scheduler).pacing(pacing)
          .retry(RetryPolicy.none()).addNetworkInterceptor(scheduler.wire()).build();
      List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
      for (int i = 0; i < REQUESTS; i++) {
        all.add(client.sendAsync(HttpRequest.newBuilder(server.uri("/api/items")).build(), BodyHandlers.ofString()));
      }
      scheduler.run(all);
      for (CompletableFuture<HttpResponse<String>> f : all) {
        assertThat(f.get().statusCode()).isEqualTo(200);
      }
      assertThat(server.count(429)).as("refusals").isZero();
    }
  }

  /**
   * The default pacing, asked for everything at once by a caller with {@code n} requests, against a
   * token bucket of {@code q} per {@code w} (burst {@code q}, then one unit per {@code w / q}): the
   * work completes within 1.1 times the least time the server allows, {@code (n - q) * w / q}, and is
   * never refused (draft-09 section 7: "A client SHOULD NOT exceed the quota units conveyed by the
   * remaining parameter before the time window expressed in the reset parameter"). Virtual time: the
   * elapsed time is the shared {@link ManualTicker}'s.
   */
  @ParameterizedTest(name = "q={0}, w={1}s, n={2}")
  @CsvSource({"50, 5, 300", "10, 10, 60", "50, 5, 1000"})
  void section7DefaultPacingCompletesWithinATenthOfTheMinimumAgainstATokenBucket(int q, int w, int n) throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    SteppingScheduler scheduler = new SteppingScheduler(ticker);
    Duration window = Duration.ofSeconds(w);
    try (TestServer server = new TestServer(ticker,
        Peers.headroom(HeaderDialect.IETF, Algorithm.TOKEN_BUCKET).create(ticker, q, window))) {
      HeadroomClient client = HeadroomClient.builder(HTTP).ticker(ticker).scheduler(scheduler)
          .retry(RetryPolicy.none()).addNetworkInterceptor(scheduler.wire()).build();
      long start = ticker.read();
      List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        all.add(client.sendAsync(HttpRequest.newBuilder(server.uri("/api/items")).build(), BodyHandlers.ofString()));
      }
      scheduler.run(all);
      for (CompletableFuture<HttpResponse<String>> f : all) {
        assertThat(f.get().statusCode()).isEqualTo(200);
      }
      assertThat(server.count(429)).as("refusals").isZero();
      assertThat(server.log()).hasSize(n);
      Duration minimum = window.multipliedBy(n - q).dividedBy(q);
      Duration elapsed = Duration.ofNanos(ticker.read() - start);
      assertThat(elapsed).as("virtual time for %d requests, minimum %s", n, minimum)
          .isBetween(minimum.minusMillis(1), Duration.ofNanos(minimum.toNanos() * 11 / 10));
    }
  }

  private static HeadroomClient client(ManualTicker ticker, Pacing pacing) {
    return HeadroomClient.builder(HTTP).ticker(ticker).scheduler(Scheduler.advancing(ticker)).pacing(pacing)
        .retry(RetryPolicy.none()).build();
  }

  @AfterAll
  static void close() {
    // HttpClient has no close() before Java 21; its threads are daemons.
  }
}
