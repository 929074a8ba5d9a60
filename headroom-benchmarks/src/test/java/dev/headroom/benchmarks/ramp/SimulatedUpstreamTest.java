package dev.headroom.benchmarks.ramp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The capacity ramp's upstream over a real socket: its latency grows with concurrency beyond its
 * slots, and halving the slots halves what it serves at once. Only lower bounds on latency are
 * asserted (a request cannot be answered before its turn and its service), never an upper one.
 */
class SimulatedUpstreamTest {

  private static final Duration SERVICE = Duration.ofMillis(50);

  private SimulatedUpstream upstream;
  private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @BeforeEach
  void start() throws InterruptedException {
    upstream = SimulatedUpstream.start(0, 2, SERVICE);
  }

  @AfterEach
  void stop() {
    upstream.close();
  }

  /** Sends {@code n} requests at once; the latency of each, in completion order. */
  private List<Long> concurrently(int n) {
    List<CompletableFuture<Long>> answers = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      long began = System.nanoTime();
      answers.add(client.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + upstream.port() + "/api")).build(),
          HttpResponse.BodyHandlers.ofString()).thenApply(r -> {
            assertEquals(200, r.statusCode());
            return System.nanoTime() - began;
          }));
    }
    return answers.stream().map(CompletableFuture::join).sorted().toList();
  }

  @Test
  void withinItsSlotsARequestTakesItsServiceTime() {
    List<Long> latencies = concurrently(2);
    assertTrue(latencies.get(0) >= SERVICE.toNanos(), "a request is served for its service time: " + latencies);
  }

  @Test
  void beyondItsSlotsRequestsWaitTheirTurn() {
    // six requests on two slots: three rounds, so the last answer comes after three service times
    List<Long> latencies = concurrently(6);
    assertTrue(latencies.get(5) >= 3 * SERVICE.toNanos(), "the last of six on two slots waits two turns: " + latencies);
    assertTrue(latencies.get(3) >= 2 * SERVICE.toNanos(), "the fourth of six waits one turn: " + latencies);
  }

  @Test
  void halvingTheSlotsHalvesWhatIsServedAtOnce() throws Exception {
    HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + upstream.port()
        + "/admin/slots?n=1")).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    List<Long> latencies = concurrently(2);
    assertTrue(latencies.get(1) >= 2 * SERVICE.toNanos(), "two requests on one slot: the second waits: " + latencies);
  }

  @Test
  void aCapacityOfNoSlotsIsRefusedNamingTheValue() throws Exception {
    HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + upstream.port()
        + "/admin/slots?n=0")).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(400, r.statusCode());
    assertTrue(r.body().contains("slots: 0"), r.body());
  }
}
