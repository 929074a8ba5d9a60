package dev.headroom.gateway.internal;

import dev.headroom.Acquisition;
import dev.headroom.Decision;
import dev.headroom.PartitionKey;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.StoreException;
import dev.headroom.gateway.GatewayConfig.Policy;
import dev.headroom.gateway.internal.HttpVocabulary.LimitRefusal;
import dev.headroom.gateway.internal.HttpVocabulary.RefusalKind;
import dev.headroom.gateway.internal.HttpVocabulary.RequestFacts;
import dev.headroom.redis.StoreOverloadedException;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * The decision step of a forwarded request ({@link Admission.Forward}): its route's policies, each
 * with the request's partition key, go to the store in one acquisition; the exchange is then
 * {@link Exchange#allowed allowed} or {@link Exchange#refused refused}.
 *
 * <p>A partition an escalating policy has blocked is refused before the store is asked
 * (abnormal-usage-detected); a refusal counts towards escalation, and one that starts a block
 * is answered as abnormal usage with the block's wait. A capacity-reduced policy's refusal is
 * temporary-reduced-capacity (draft-ietf-httpapi-ratelimit-headers-09 section 5.2). Content-bytes
 * policies admit while not in debt and are charged when the exchange ends. The store's answer
 * arrives on the connection's event loop, completed or not.
 */
final class QuotaCheck {
  private QuotaCheck() {}

  static void decide(Exchange ex) {
    GatewayState state = ex.state;
    CompiledRoute route = ex.route;
    List<Policy> policies = route.policies();
    if (policies.isEmpty()) {
      ex.allowed(null);
      return;
    }
    long now = Long.MIN_VALUE; // read once, and only for a policy that escalates
    RequestFacts facts = new RequestFacts(ex.conn.peerAddress(), ex.request.method().name(), ex.path(),
        ex.request.headers(), route.route().path());
    List<Acquisition> acquisitions = new ArrayList<>(policies.size());
    List<PartitionKey> keys = new ArrayList<>(policies.size());
    for (Policy p : policies) {
      PartitionKey key = ex.conn.peerKey(ex.snap, p, facts);
      keys.add(key);
      // only a policy with escalation can have blocked a partition (onRefused below)
      long blocked = 0;
      if (p.escalation().isPresent()) {
        if (now == Long.MIN_VALUE) {
          now = state.ticker.read();
        }
        blocked = state.escalations.blockedFor(p.name(), key, now);
      }
      if (blocked > 0) {
        state.metrics.decision(p.name(), "blocked");
        long seconds = Math.max(1, (blocked + 999_999_999L) / 1_000_000_000L);
        ex.refused(ex.snap.vocabulary().refusal(new LimitRefusal(RefusalKind.ABNORMAL_USAGE_DETECTED, p, null, seconds,
            route.route(), ex.path()), ex.format));
        return;
      }
      QuotaPolicy effective = state.capacity.effective(p.quota());
      // content-bytes: admit while not in debt, charge the bytes transferred when the exchange ends
      long cost = effective.unit() == QuotaUnit.CONTENT_BYTES ? 0 : 1;
      acquisitions.add(Acquisition.of(effective, key, cost));
    }
    long t0 = System.nanoTime();
    CompletionStage<Decision> stage;
    try {
      stage = state.limiter.acquireAsync(acquisitions);
    } catch (StoreException | IllegalArgumentException e) {
      stage = CompletableFuture.failedFuture(e);
    }
    CompletableFuture<Decision> f = stage.toCompletableFuture();
    if (f.isDone()) {
      decided(ex, f, t0, policies, keys);
    } else {
      f.whenComplete((d, e) -> ex.conn.ctx.executor().execute(() -> decided(ex, f, t0, policies, keys)));
    }
  }

  private static void decided(Exchange ex, CompletableFuture<Decision> f, long t0, List<Policy> policies,
      List<PartitionKey> keys) {
    GatewayState state = ex.state;
    state.metrics.storeLatency(System.nanoTime() - t0);
    Decision d;
    try {
      d = f.join();
    } catch (RuntimeException e) {
      storeFailed(ex, e);
      return;
    }
    if (ex.ended()) {
      state.limiter.release(d); // the client left while the store was deciding
      return;
    }
    List<PolicyOutcome> outcomes = d.outcomes();
    for (int i = 0; i < outcomes.size(); i++) {
      PolicyOutcome o = outcomes.get(i);
      state.metrics.decision(o.policy().name(),
          o.allowed() ? "allowed" : state.capacity.isReduced(o.policy().name()) ? "reduced" : "refused");
      if (d.allowed() && o.policy().unit() == QuotaUnit.CONTENT_BYTES) {
        ex.byteOutcomes.add(o);
      }
    }
    if (d.allowed()) {
      ex.allowed(d);
      return;
    }
    ex.decision = d;
    refuse(ex, d, policies, keys);
  }

  /**
   * The store could not decide (a Redis store failing closed, or the gateway's queue to it full):
   * 503 temporary-reduced-capacity (draft-ietf-httpapi-ratelimit-headers-09 section 5.2) with a
   * short Retry-After; the warning is throttled ({@link GatewayState#storeWarning}).
   */
  static void storeFailed(Exchange ex, Throwable e) {
    Throwable why = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    ex.state.storeWarning.warn(ex.state.ticker, "store failed to decide a request on route "
        + ex.route.route().name() + ": " + why);
    // the gateway's own overload (its queue to Redis full, Redis possibly healthy): shorter wait
    boolean overloaded = why instanceof StoreOverloadedException;
    LocalResponse r = ex.snap.vocabulary().error(GatewayMessages.storeUnavailable(overloaded), ex.format, ex.path());
    r.headers().set(HttpHeaderNames.RETRY_AFTER, Long.toString(GatewayMessages.storeRetryAfterSeconds(overloaded)));
    ex.refused(r);
  }

  private static void refuse(Exchange ex, Decision d, List<Policy> policies, List<PartitionKey> keys) {
    GatewayState state = ex.state;
    PolicyOutcome worst = d.mostConstraining();
    int index = d.outcomes().indexOf(worst);
    Policy policy = policies.get(index);
    long now = Long.MIN_VALUE; // read once, and only for a policy that escalates
    RefusalKind kind = state.capacity.isReduced(policy.name())
        ? RefusalKind.TEMPORARY_REDUCED_CAPACITY : RefusalKind.QUOTA_EXCEEDED;
    long retryAfter = d.retryAfterSeconds();
    for (PolicyOutcome o : d.violated()) {
      int i = d.outcomes().indexOf(o);
      Policy p = policies.get(i);
      if (p.escalation().isPresent()) {
        if (now == Long.MIN_VALUE) {
          now = state.ticker.read();
        }
        long block = state.escalations.onRefused(p.name(), p.escalation().get(), keys.get(i), now,
            o.retryAfter().toNanos());
        if (block > 0) {
          kind = RefusalKind.ABNORMAL_USAGE_DETECTED;
          policy = p;
          retryAfter = Math.max(retryAfter, (block + 999_999_999L) / 1_000_000_000L);
        }
      }
    }
    ex.refused(ex.snap.vocabulary().refusal(
        new LimitRefusal(kind, policy, d, retryAfter, ex.route.route(), ex.path()), ex.format));
  }
}
