package dev.headroom.enforcement;

import static dev.headroom.enforcement.TestRequests.request;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.Algorithm;
import dev.headroom.InMemoryStore;
import dev.headroom.ManualTicker;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.enforcement.plan.Plan;
import dev.headroom.enforcement.plan.PlanResolution;
import dev.headroom.enforcement.plan.Plans;
import dev.headroom.enforcement.plan.PolicyOverride;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.PolicyTexts;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Requests waiting for their turn under a policy's queue ({@link Waiting}), on a manual ticker and
 * a timer that runs its tasks as the ticker moves: first come first served per partition, admitted
 * as the token bucket frees a unit, refused when the wait would pass maxWait or the queue is full.
 */
class WaitingGateTest {
  private final ManualTicker ticker = ManualTicker.atFixedInstant();
  private final LimitRefusals refusals = LimitRefusals.builder().ticker(ticker)
      .defaults(PolicyTexts.builder("Fair use.").build()).build();
  /** Five requests a second per API key, refilled one each 200 ms. */
  private final QuotaPolicy paced = QuotaPolicy.builder("paced").quota(5).window(Duration.ofSeconds(1))
      .algorithm(Algorithm.TOKEN_BUCKET).partitioning("api-key").build();
  private final VirtualTimer timer = new VirtualTimer();
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

  /** Tasks due on the manual ticker, run in due order (then in the order scheduled) by {@link #advance}. */
  private final class VirtualTimer implements Waiting.Timer {
    private record Task(long due, long seq, Runnable run) {}

    private final PriorityQueue<Task> tasks = new PriorityQueue<>((a, b) -> a.due != b.due
        ? Long.compare(a.due, b.due) : Long.compare(a.seq, b.seq));
    private long seq;

    @Override
    public synchronized Runnable schedule(Duration delay, Runnable task) {
      Task t = new Task(ticker.read() + delay.toNanos(), seq++, task);
      tasks.add(t);
      return () -> {
        synchronized (VirtualTimer.this) {
          tasks.remove(t);
        }
      };
    }

    /** Moves the ticker by {@code d}, running every task due on the way at its due time. */
    void advance(Duration d) {
      long end = ticker.read() + d.toNanos();
      while (true) {
        Task t;
        synchronized (this) {
          t = tasks.peek();
          if (t == null || t.due > end) {
            break;
          }
          tasks.poll();
        }
        if (t.due > ticker.read()) {
          ticker.advanceNanos(t.due - ticker.read());
        }
        t.run.run();
      }
      ticker.advanceNanos(end - ticker.read());
    }
  }

  private Gate<String> gate(Waiting waiting) {
    return Gate.<String>builder().limiter(QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build()))
        .refusals(refusals).ticker(ticker).route(RouteRules.builder("/items").policy(paced).build())
        .queue("paced", waiting).waitTimer(timer).meterRegistry(meters).build();
  }

  private static int status(CompletableFuture<Verdict> v) {
    return v.join().kind() == Verdict.Kind.ADMIT ? 200 : v.join().answer().status();
  }

  private double waiting() {
    return meters.get(HeadroomMeters.QUEUE_WAITING).tag(HeadroomMeters.POLICY, "paced").gauge().value();
  }

  @Test
  void aBurstIsSpreadOverTimeInArrivalOrderAndTheRequestsBeyondMaxWaitAreRefused() {
    Gate<String> gate = gate(new Waiting(Duration.ofSeconds(1), 100));
    List<CompletableFuture<Verdict>> burst = new ArrayList<>();
    List<Integer> admittedInOrder = new CopyOnWriteArrayList<>();
    for (int i = 0; i < 13; i++) {
      CompletableFuture<Verdict> v = gate.decideAsync(request("GET", "/items", "a"), "").toCompletableFuture();
      int n = i;
      v.thenAccept(x -> {
        if (x.kind() == Verdict.Kind.ADMIT) {
          admittedInOrder.add(n);
        }
      });
      burst.add(v);
    }
    assertThat(burst.subList(0, 5)).allMatch(v -> status(v) == 200);
    assertThat(burst.subList(5, 13)).noneMatch(CompletableFuture::isDone);
    assertThat(waiting()).isEqualTo(8);
    // another partition is not held up by this one's line
    assertThat(status(gate.decideAsync(request("GET", "/items", "b"), "").toCompletableFuture())).isEqualTo(200);

    timer.advance(Duration.ofMillis(199));
    assertThat(burst.get(5)).isNotDone();
    timer.advance(Duration.ofMillis(1));
    assertThat(status(burst.get(5))).isEqualTo(200);
    assertThat(burst.get(6)).isNotDone();
    timer.advance(Duration.ofMillis(800));
    // one unit each 200 ms: five more within the second, in the order they came
    assertThat(admittedInOrder).containsExactly(0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
    assertThat(burst.subList(10, 13)).allMatch(v -> status(v) == 429);
    assertThat(burst.get(12).join().answer().fields()).anySatisfy(h -> assertThat(h.getKey()).isEqualToIgnoringCase("Retry-After"));
    assertThat(waiting()).isZero();
    assertThat(meters.get(HeadroomMeters.QUEUE_ADMITTED).counter().count()).isEqualTo(5);
    assertThat(meters.get(HeadroomMeters.QUEUE_TIMEOUTS).counter().count()).isEqualTo(3);
  }

  @Test
  void aFullQueueRefusesAtOnce() {
    Gate<String> gate = gate(new Waiting(Duration.ofSeconds(1), 2));
    for (int i = 0; i < 5; i++) {
      assertThat(status(gate.decideAsync(request("GET", "/items", "a"), "").toCompletableFuture())).isEqualTo(200);
    }
    CompletableFuture<Verdict> first = gate.decideAsync(request("GET", "/items", "a"), "").toCompletableFuture();
    CompletableFuture<Verdict> second = gate.decideAsync(request("GET", "/items", "a"), "").toCompletableFuture();
    CompletableFuture<Verdict> third = gate.decideAsync(request("GET", "/items", "a"), "").toCompletableFuture();
    assertThat(first).isNotDone();
    assertThat(second).isNotDone();
    assertThat(status(third)).isEqualTo(429); // the queue of 2 is full: the ordinary refusal, at once
    timer.advance(Duration.ofMillis(400));
    assertThat(status(first)).isEqualTo(200);
    assertThat(status(second)).isEqualTo(200);
  }

  @Test
  void aRetryAfterLongerThanMaxWaitIsRefusedAtOnceAndTheBlockingPathNeverWaits() {
    QuotaPolicy slow = QuotaPolicy.builder("slow").quota(1).window(Duration.ofSeconds(10))
        .algorithm(Algorithm.TOKEN_BUCKET).partitioning("api-key").build();
    Gate<String> gate = Gate.<String>builder().limiter(QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build()))
        .refusals(refusals).ticker(ticker).route(RouteRules.builder("/items").policy(slow).build())
        .queue("slow", new Waiting(Duration.ofSeconds(1), 10)).waitTimer(timer).build();
    assertThat(status(gate.decideAsync(request("GET", "/items", "a"), "").toCompletableFuture())).isEqualTo(200);
    assertThat(status(gate.decideAsync(request("GET", "/items", "a"), "").toCompletableFuture())).isEqualTo(429);
    Gate<String> paced = gate(new Waiting(Duration.ofSeconds(1), 10));
    for (int i = 0; i < 5; i++) {
      assertThat(paced.decide(request("GET", "/items", "a"), "").kind()).isEqualTo(Verdict.Kind.ADMIT);
    }
    assertThat(paced.decide(request("GET", "/items", "a"), "").answer().status()).isEqualTo(429);
  }

  /**
   * A waiting request holds no place in its route's adaptive limit (AdaptiveConcurrency): with a
   * limit of 2 and two requests waiting, requests of other partitions are still admitted, and a
   * waiting request takes a place only when its turn comes; with the limit full then, it is refused
   * 503 temporary-reduced-capacity (draft-ietf-httpapi-ratelimit-headers-09 section 5.2), as a
   * request arriving then would be.
   */
  @Test
  void waitingRequestsHoldNoPlaceInTheAdaptiveLimit() {
    Gate<String> gate = Gate.<String>builder().limiter(QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build()))
        .refusals(refusals).ticker(ticker).route(RouteRules.builder("/items").policy(paced)
            .adaptive(AdaptiveConcurrency.builder().minLimit(2).initialLimit(2).maxLimit(2).build()).build())
        .queue("paced", new Waiting(Duration.ofSeconds(1), 10)).waitTimer(timer).build();
    for (int i = 0; i < 5; i++) {
      gate.decideAsync(request("GET", "/items", "a"), "").toCompletableFuture().join().admission().complete(200, 0);
    }
    CompletableFuture<Verdict> first = gate.decideAsync(request("GET", "/items", "a"), "").toCompletableFuture();
    CompletableFuture<Verdict> second = gate.decideAsync(request("GET", "/items", "a"), "").toCompletableFuture();
    assertThat(first).isNotDone();
    assertThat(second).isNotDone();

    Verdict other = gate.decideAsync(request("GET", "/items", "b"), "").toCompletableFuture().join();
    assertThat(other.kind()).as("a request of another partition, two waiting under a limit of 2").isEqualTo(Verdict.Kind.ADMIT);
    assertThat(gate.waiting()).containsExactly(Map.entry("paced", 2));
    assertThat(gate.adaptiveStates()).singleElement().satisfies(a -> {
      assertThat(a.policy()).isEqualTo("adaptive");
      assertThat(a.limit()).isEqualTo(2);
      assertThat(a.inflight()).isEqualTo(1);
    });
    timer.advance(Duration.ofMillis(200));
    assertThat(status(first)).isEqualTo(200); // its turn: it takes the second place
    assertThat(status(gate.decideAsync(request("GET", "/items", "c"), "").toCompletableFuture())).isEqualTo(503);

    timer.advance(Duration.ofMillis(200));
    GateResponse full = second.join().answer();
    assertThat(full.status()).as("its turn, with the limit full").isEqualTo(503);
    assertThat(new String(full.body(), StandardCharsets.UTF_8)).contains("temporary-reduced-capacity");

    other.admission().complete(200, 0);
    first.join().admission().complete(200, 0);
    assertThat(status(gate.decideAsync(request("GET", "/items", "c"), "").toCompletableFuture())).isEqualTo(200);
    assertThat(status(gate.decideAsync(request("GET", "/items", "d"), "").toCompletableFuture())).isEqualTo(200);
  }

  /**
   * A plan's version of a queued policy ({@code paced:pro}, named by Plans) waits in the queue of the
   * policy it derives from: the plan of a request is its X-Api-Key, as a plan resolver would find it.
   */
  @Test
  void aPlansVersionOfAQueuedPolicyWaitsInItsQueue() {
    Plans plans = Plans.of(List.of(new Plan("free", Map.of(), Optional.empty()),
        new Plan("pro", Map.of("paced", PolicyOverride.quota(2)), Optional.empty())), "free", List.of(paced));
    Gate<String> gate = Gate.<String>builder().limiter(QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build()))
        .refusals(refusals).ticker(ticker).route(RouteRules.builder("/items").policy(paced).build())
        .plans(plans, view -> CompletableFuture.completedFuture(new PlanResolution.Named(view.headers("X-Api-Key").get(0))),
            Duration.ofSeconds(1))
        .queue("paced", new Waiting(Duration.ofSeconds(1), 10)).waitTimer(timer).meterRegistry(meters).build();
    for (int i = 0; i < 2; i++) {
      Verdict v = gate.decideAsync(request("GET", "/items", "pro"), "").toCompletableFuture().join();
      assertThat(v.admission().decision().outcomes().get(0).policy().name()).isEqualTo("paced:pro");
    }
    CompletableFuture<Verdict> waits = gate.decideAsync(request("GET", "/items", "pro"), "").toCompletableFuture();
    assertThat(waits).as("refused by paced:pro, it waits in paced's queue").isNotDone();
    assertThat(waiting()).isEqualTo(1);
    timer.advance(Duration.ofMillis(500)); // two a second: one unit each 500 ms
    assertThat(status(waits)).isEqualTo(200);
    assertThat(waiting()).isZero();
    assertThat(meters.get(HeadroomMeters.QUEUE_ADMITTED).tag(HeadroomMeters.POLICY, "paced").counter().count())
        .isEqualTo(1);
  }

  @Test
  void badSettingsAreNamed() {
    assertThatThrownBy(() -> new Waiting(Duration.ZERO, 1)).hasMessageContaining("maxWait: PT0S");
    assertThatThrownBy(() -> new Waiting(Duration.ofSeconds(1), 0)).hasMessageContaining("maxQueued: 0");
    assertThatThrownBy(() -> Gate.<String>builder().limiter(QuotaLimiter.of(InMemoryStore.builder().build()))
        .refusals(refusals).route(RouteRules.builder("/items").policy(paced).build())
        .queue("other", new Waiting(Duration.ofSeconds(1), 1)).build())
        .hasMessageContaining("queue: policy 'other'");
  }
}
