package dev.headroom.gateway.internal;

import dev.headroom.Acquisition;
import dev.headroom.Decision;
import dev.headroom.PartitionKey;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.StoreException;
import dev.headroom.gateway.config.Escalation;
import dev.headroom.gateway.config.Policy;
import dev.headroom.gateway.internal.HttpVocabulary.LimitRefusal;
import dev.headroom.gateway.internal.HttpVocabulary.RefusalKind;
import dev.headroom.gateway.internal.HttpVocabulary.RequestFacts;
import dev.headroom.enforcement.plan.PlanResolution;
import dev.headroom.enforcement.plan.Plans;
import dev.headroom.http.body.ServiceErrors;
import dev.headroom.enforcement.Escalations;
import dev.headroom.redis.StoreOverloadedException;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * The decision step of a forwarded request ({@link Admission.Forward}): its plan, when the
 * configuration has plans ({@link PlanGate}: the route's policies as the plan enforces them, or 401
 * for an invalid credential), then its route's policies, each
 * with the request's partition key, go to the store in one acquisition; the exchange is then
 * {@link Exchange#allowed allowed} or {@link Exchange#refused refused}.
 *
 * <p>A partition an escalating policy has blocked is refused before the store is asked
 * (abnormal-usage-detected); a refusal counts towards escalation, and one that starts a block
 * is answered as abnormal usage with the block's wait. A capacity-reduced policy's refusal (a
 * plan's policy follows its base's reduction: {@code CapacityReductions}) is
 * temporary-reduced-capacity (draft-ietf-httpapi-ratelimit-headers-09 section 5.2). Content-bytes
 * policies admit while not in debt and are charged when the exchange ends. The store's answer
 * arrives on the connection's event loop, completed or not.
 */
final class QuotaCheck {
  private QuotaCheck() {}

  static void decide(Exchange ex) {
    CompiledRoute route = ex.route;
    List<Policy> policies = route.policies();
    if (policies.isEmpty()) {
      ex.allowed(null, List.of(), null);
      return;
    }
    RequestFacts facts = new RequestFacts(ex.conn.peerAddress(), ex.request.method().name(), ex.path(),
        ex.request.headers(), route.route().path());
    PlanGate gate = ex.snap.plans().orElse(null);
    if (gate == null) {
      decide(ex, policies, facts);
      return;
    }
    CompletableFuture<Plans.Selection> f = gate.select(facts, ex.state.ticker);
    if (f.isDone()) {
      planned(ex, gate, f.join(), facts);
    } else {
      f.thenAccept(s -> ex.conn.ctx.executor().execute(() -> planned(ex, gate, s, facts)));
    }
  }

  /**
   * The request's plan is known: its route's policies as the plan enforces them are decided, or,
   * for an invalid credential, 401 with the resolver's {@code error}, {@code detail} and
   * {@code why} (Graceful Boundaries section 6) and {@code WWW-Authenticate} (RFC 9110 section 11.6.1).
   */
  private static void planned(Exchange ex, PlanGate gate, Plans.Selection s, RequestFacts facts) {
    if (ex.ended()) {
      return;
    }
    if (s.rejected().isPresent()) {
      PlanResolution.Rejected r = s.rejected().get();
      ex.state.metrics.decision("plan", "rejected");
      LocalResponse out = ex.snap.vocabulary().error(new HttpVocabulary.GatewayError(401, r.error(), r.detail(),
          r.why(), java.util.Map.of()), ex.format, ex.path());
      out.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer error=\"" + r.error() + "\"");
      ex.refused(out);
      return;
    }
    decide(ex, gate.policies.policies(s.plan(), ex.route.policies()), facts);
  }

  private static void decide(Exchange ex, List<Policy> policies, RequestFacts facts) {
    GatewayState state = ex.state;
    CompiledRoute route = ex.route;
    long now = Long.MIN_VALUE; // read once, and only for a policy that escalates
    OptionalLong units = RequestRules.cost(ex, route.route().cost());
    if (units.isEmpty()) {
      return; // refused with 400: the request's cost header is not valid
    }
    List<Policy> enforced = new ArrayList<>(policies.size());
    List<Acquisition> acquisitions = new ArrayList<>(policies.size());
    List<PartitionKey> keys = new ArrayList<>(policies.size());
    List<Policy> shadows = new ArrayList<>(0);
    List<Acquisition> shadowAcquisitions = new ArrayList<>(0);
    for (Policy p : policies) {
      if (!RequestRules.applies(ex, p, facts)) {
        continue;
      }
      PartitionKey key = ex.conn.peerKey(ex.snap, p, facts);
      QuotaPolicy effective = state.capacity.effective(p.quota(), baseName(ex, p.name()));
      long cost = RequestRules.units(effective, units.getAsLong());
      if (p.rules().shadow()) {
        shadows.add(p);
        shadowAcquisitions.add(Acquisition.of(effective, key, cost));
        continue;
      }
      enforced.add(p);
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
        state.metrics.decision(p.name(), "blocked", key);
        long seconds = Escalations.seconds(blocked);
        ex.refused(ex.snap.vocabulary().refusal(new LimitRefusal(RefusalKind.ABNORMAL_USAGE_DETECTED, p, null, seconds,
            route.route(), ex.path()), ex.format));
        return;
      }
      acquisitions.add(Acquisition.of(effective, key, cost));
    }
    CompletableFuture<ShadowCheck.Result> shadow = ShadowCheck.decide(ex, shadows, shadowAcquisitions);
    if (acquisitions.isEmpty()) {
      // every policy bypassed, out of its conditions, or in shadow
      shadow.thenAccept(s -> ex.conn.ctx.executor().execute(() -> {
        if (!ex.ended()) {
          ex.allowed(s.fields(), List.of(), null);
        }
      }));
      return;
    }
    long t0 = System.nanoTime();
    CompletionStage<Decision> stage;
    try {
      stage = state.limiter.acquireAsync(acquisitions);
    } catch (StoreException | IllegalArgumentException e) {
      stage = CompletableFuture.failedFuture(e);
    }
    CompletableFuture<Decision> f = stage.toCompletableFuture();
    if (f.isDone() && shadow.isDone()) {
      decided(ex, f, t0, enforced, keys, acquisitions, shadow.join());
    } else {
      CompletableFuture.allOf(f, shadow).whenComplete((d, e) -> ex.conn.ctx.executor().execute(
          () -> decided(ex, f, t0, enforced, keys, acquisitions, shadow.join())));
    }
  }

  private static void decided(Exchange ex, CompletableFuture<Decision> f, long t0, List<Policy> policies,
      List<PartitionKey> keys, List<Acquisition> acquisitions, ShadowCheck.Result shadow) {
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
      // the client left while the store was deciding
      Settlement.logged(state.limiter.releaseAsync(d), () -> "release the leases of a decision");
      shadow.release(state.limiter);
      return;
    }
    List<PolicyOutcome> outcomes = d.outcomes();
    List<PolicyOutcome> contentBytes = List.of();
    for (int i = 0; i < outcomes.size(); i++) {
      PolicyOutcome o = outcomes.get(i);
      state.metrics.decision(o.policy().name(),
          o.allowed() ? "allowed" : reduced(ex, o.policy().name()) ? "reduced" : "refused", o.key());
      if (d.allowed() && o.policy().unit() == QuotaUnit.CONTENT_BYTES) {
        if (contentBytes.isEmpty()) {
          contentBytes = new ArrayList<>(1);
        }
        contentBytes.add(o);
      }
    }
    if (d.allowed()) {
      Settlement settlement = new Settlement(ex.route.route().cost());
      for (int i = 0; i < policies.size(); i++) {
        if (acquisitions.get(i).cost() > 0) {
          settlement.counted(acquisitions.get(i), policies.get(i).rules().count());
        }
      }
      ex.allowed(shadow.merge(d), contentBytes, settlement.isEmpty() ? null : settlement);
      return;
    }
    shadow.release(state.limiter);
    ex.hold(d, List.of()); // a refusal's leases, if any, are released when the exchange ends
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
    r.headers().set(HttpHeaderNames.RETRY_AFTER, Long.toString(ServiceErrors.storeRetryAfterSeconds(overloaded)));
    ex.refused(r);
  }

  /** The base policy of a plan's policy ({@code api} for {@code api:pro}), whose capacity factor it follows. */
  private static String baseName(Exchange ex, String policy) {
    PlanGate gate = ex.snap.plans().orElse(null);
    return gate == null ? policy : gate.policies.plans().baseName(policy);
  }

  private static boolean reduced(Exchange ex, String policy) {
    return ex.state.capacity.isReduced(policy, baseName(ex, policy));
  }

  private static void refuse(Exchange ex, Decision d, List<Policy> policies, List<PartitionKey> keys) {
    GatewayState state = ex.state;
    PolicyOutcome worst = d.mostConstraining();
    int index = d.outcomes().indexOf(worst);
    Policy policy = policies.get(index);
    long now = Long.MIN_VALUE; // read once, and only for a policy that escalates
    RefusalKind kind = reduced(ex, policy.name())
        ? RefusalKind.TEMPORARY_REDUCED_CAPACITY : RefusalKind.QUOTA_EXCEEDED;
    long retryAfter = d.retryAfterSeconds();
    for (PolicyOutcome o : d.violated()) {
      int i = d.outcomes().indexOf(o);
      Policy p = policies.get(i);
      if (p.escalation().isPresent()) {
        if (now == Long.MIN_VALUE) {
          now = state.ticker.read();
        }
        Escalation esc = p.escalation().get();
        long block = state.escalations.onRefused(p.name(), esc.threshold(), esc.block().toNanos(), keys.get(i), now,
            o.retryAfter().toNanos());
        if (block > 0) {
          kind = RefusalKind.ABNORMAL_USAGE_DETECTED;
          policy = p;
          retryAfter = Math.max(retryAfter, Escalations.seconds(block));
        }
      }
    }
    ex.refused(ex.snap.vocabulary().refusal(
        new LimitRefusal(kind, policy, d, retryAfter, ex.route.route(), ex.path()), ex.format));
  }
}
