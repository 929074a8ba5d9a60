package dev.headroom.enforcement;

import static dev.headroom.enforcement.TestRequests.request;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.Acquisition;
import dev.headroom.Decision;
import dev.headroom.InMemoryStore;
import dev.headroom.Lease;
import dev.headroom.ManualTicker;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.Store;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.PolicyTexts;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/**
 * A request's place in its route's adaptive limit (AdaptiveConcurrency) is given back exactly once
 * on every way the request can end before its admission reaches the front end: a limiter that
 * throws what it should not (on the blocking path, synchronously on the asynchronous one, or as a
 * failed stage), and a decision the front end cancelled before the store answered. An adaptive
 * place never expires, unlike a lease: one lost place is one request fewer for good.
 */
class AdaptivePlacesTest {
  private final ManualTicker ticker = ManualTicker.atFixedInstant();
  private final InMemoryStore memory = InMemoryStore.builder().ticker(ticker).build();
  private final QuotaPolicy api = QuotaPolicy.builder("api").quota(1000).window(Duration.ofMinutes(1)).build();
  /** A concurrency policy, so that an admission holds a lease the cancelled decision must release. */
  private final QuotaPolicy slots = QuotaPolicy.builder("slots").quota(100).window(Duration.ofMinutes(1))
      .unit(QuotaUnit.CONCURRENT_REQUESTS).build();

  /** How the store misbehaves. */
  private enum Fault { NONE, THROWS, FAILED_STAGE, LATER }

  /** The in-memory store, which throws a bug, fails its stage, or answers when the test says. */
  private final class FaultyStore implements Store {
    volatile Fault fault = Fault.NONE;
    volatile CompletableFuture<Decision> later;
    volatile List<Acquisition> asked;

    @Override
    public Decision acquire(List<Acquisition> acquisitions) {
      if (fault != Fault.NONE) {
        throw new IllegalStateException("a bug in the store");
      }
      return memory.acquire(acquisitions);
    }

    @Override
    public CompletionStage<Decision> acquireAsync(List<Acquisition> acquisitions) {
      return switch (fault) {
        case NONE -> memory.acquireAsync(acquisitions);
        case THROWS -> throw new IllegalStateException("a bug in the store");
        case FAILED_STAGE -> CompletableFuture.failedFuture(new IllegalStateException("a bug in the store"));
        case LATER -> {
          asked = acquisitions;
          later = new CompletableFuture<>();
          yield later;
        }
      };
    }

    @Override
    public void charge(Acquisition acquisition) {
      memory.charge(acquisition);
    }

    @Override
    public void refund(Acquisition acquisition) {
      memory.refund(acquisition);
    }

    @Override
    public void release(Lease lease) {
      memory.release(lease);
    }
  }

  private final FaultyStore store = new FaultyStore();
  private final Gate<String> gate = Gate.<String>builder().limiter(QuotaLimiter.of(store)).ticker(ticker)
      .refusals(LimitRefusals.builder().ticker(ticker).defaults(PolicyTexts.builder("Fair use.").build()).build())
      .route(RouteRules.builder("/work").policy(api).policy(slots)
          .adaptive(AdaptiveConcurrency.builder().minLimit(2).initialLimit(2).maxLimit(2).build()).build())
      .build();

  private int inflight() {
    return gate.adaptive(Gate.identity(gate.routes().get(0))).inflight();
  }

  /** The limit of 2 is whole: two requests are admitted at once, the third refused 503. */
  private void assertWholeLimit() {
    Verdict one = gate.decide(request("GET", "/work", "a"), "");
    Verdict two = gate.decideAsync(request("GET", "/work", "b"), "").toCompletableFuture().join();
    assertThat(one.kind()).isEqualTo(Verdict.Kind.ADMIT);
    assertThat(two.kind()).isEqualTo(Verdict.Kind.ADMIT);
    assertThat(gate.decide(request("GET", "/work", "c"), "").answer().status()).isEqualTo(503);
    one.admission().complete(200, 0);
    two.admission().complete(200, 0);
  }

  @Test
  void aLimiterThatThrowsLosesNoPlace() {
    store.fault = Fault.THROWS;
    for (int i = 0; i < 6; i++) { // three times the limit
      assertThatThrownBy(() -> gate.decide(request("GET", "/work", "a"), "")).hasMessageContaining("a bug in the store");
      assertThatThrownBy(() -> gate.decideAsync(request("GET", "/work", "a"), ""))
          .hasMessageContaining("a bug in the store");
    }
    store.fault = Fault.FAILED_STAGE;
    for (int i = 0; i < 6; i++) {
      // a stage already failed is rethrown at once (a bug is never a verdict)
      assertThatThrownBy(() -> gate.decideAsync(request("GET", "/work", "a"), "").toCompletableFuture().join())
          .isInstanceOf(CompletionException.class).hasMessageContaining("a bug in the store");
    }
    assertThat(inflight()).isZero();
    store.fault = Fault.NONE;
    assertWholeLimit();
  }

  @Test
  void aDecisionCancelledBeforeTheStoreAnsweredGivesItsPlaceAndLeasesBack() {
    store.fault = Fault.LATER;
    for (int i = 0; i < 6; i++) {
      CompletableFuture<Verdict> v = gate.decideAsync(request("GET", "/work", "a"), "").toCompletableFuture();
      assertThat(v).isNotDone();
      v.cancel(false); // the client left while the store decided
      store.later.complete(memory.acquire(store.asked)); // the store admits: nobody will complete it
    }
    assertThat(inflight()).isZero();
    Decision leases = memory.acquire(List.of(Acquisition.of(slots, PartitionKey.GLOBAL, 1)));
    assertThat(leases.outcomes().get(0).remaining()).as("the cancelled admissions' leases were released").isEqualTo(99);
    leases.leases().forEach(memory::release);
    store.fault = Fault.NONE;
    assertWholeLimit();
  }
}
