package dev.headroom.gateway.internal;

import dev.headroom.Ticker;
import dev.headroom.gateway.internal.HttpVocabulary.RequestFacts;
import dev.headroom.enforcement.plan.PlanResolution;
import dev.headroom.enforcement.plan.Plans;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.slf4j.LoggerFactory;

/**
 * The plan step of a forwarded request: its plan resolved from its identity by the configured
 * {@link dev.headroom.enforcement.plan.PlanResolver} (held while it answers: {@link HeldResolver}), and
 * the route's policies as that plan enforces them ({@link PlanPolicies}). Every outcome has a
 * declared consequence ({@link Plans#select}): the caller's plan; the fallback plan for no
 * identity, an unknown plan, a resolver that fails, throws, or does not answer within
 * {@link #DEADLINE} (or a SQL resolver's longer {@code deadline}); 401 for an invalid credential.
 * So a resolver can make a caller neither
 * unlimited nor the cause of a 500.
 *
 * <p>One per configuration snapshot; thread-safe.
 */
final class PlanGate {
  /** The longest the gateway waits for any resolver, whatever its own deadline says. */
  static final Duration DEADLINE = Duration.ofSeconds(2);

  /** The least time between two log lines about plans falling back. */
  static final Duration WARNING_INTERVAL = Duration.ofSeconds(10);

  final PlanPolicies policies;
  private final HeldResolver resolver;
  /** The longest a request waits for its plan ({@link PlanResolvers#wait}). */
  private final Duration wait;
  private final ThrottledWarning warning = new ThrottledWarning(WARNING_INTERVAL,
      LoggerFactory.getLogger(PlanGate.class)::warn);

  PlanGate(PlanPolicies policies, HeldResolver resolver, Duration wait) {
    this.policies = policies;
    this.resolver = resolver;
    this.wait = wait;
  }

  /**
   * The request's plan, or its refusal; the stage never completes exceptionally. The resolver is
   * held until the answer is in (or the wait is over), so a reload cannot close it meanwhile.
   */
  CompletableFuture<Plans.Selection> select(RequestFacts facts, Ticker ticker) {
    HeldResolver held = resolver.hold();
    CompletionStage<PlanResolution> stage;
    if (held == null) {
      stage = CompletableFuture.completedFuture(new PlanResolution.Unavailable("the plan resolver is closed"));
    } else {
      try {
        stage = held.resolver().resolve(new FactsView(facts));
      } catch (RuntimeException e) {
        stage = CompletableFuture.completedFuture(new PlanResolution.Unavailable("the resolver threw " + e));
      }
    }
    CompletableFuture<PlanResolution> own = stage == null
        ? CompletableFuture.completedFuture(new PlanResolution.Unavailable("the resolver returned nothing"))
        : stage.toCompletableFuture().thenApply(r -> r); // a copy: the timeout never completes theirs
    if (!own.isDone()) {
      own.completeOnTimeout(new PlanResolution.Unavailable("no answer within " + wait.toMillis() + " ms"),
          wait.toMillis(), TimeUnit.MILLISECONDS);
    }
    if (held != null) {
      own.whenComplete((r, e) -> held.release());
    }
    return own.handle((r, e) -> {
      PlanResolution res = e != null ? new PlanResolution.Unavailable("the resolver failed: " + e)
          : r == null ? new PlanResolution.Unavailable("the resolver answered null") : r;
      Plans.Selection s = policies.plans().select(res);
      s.warning().ifPresent(w -> warning.warn(ticker, w));
      return s;
    });
  }
}
