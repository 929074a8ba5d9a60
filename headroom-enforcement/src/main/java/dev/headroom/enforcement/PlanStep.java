package dev.headroom.enforcement;

import dev.headroom.Ticker;
import dev.headroom.enforcement.partition.RequestView;
import dev.headroom.enforcement.plan.PlanResolution;
import dev.headroom.enforcement.plan.PlanResolver;
import dev.headroom.enforcement.plan.Plans;
import dev.headroom.http.body.Refusal;
import dev.headroom.http.body.RefusalFormat;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The gate's plan step: the request's plan from the {@link PlanResolver} within {@code deadline},
 * waited for on the request's thread ({@link #select}) or not at all ({@link #selectAsync}); a
 * resolver that throws, fails, answers null or does not answer in time is
 * {@link PlanResolution.Unavailable}, so the fallback plan ({@link Plans#select}); an invalid
 * credential is 401 with a Graceful Boundaries body and {@code WWW-Authenticate: Bearer}
 * (RFC 6750 section 3). Fallbacks are logged through {@link System.Logger} (the platform's
 * logging, which SLF4J and the containers bridge), at most once per {@link #WARNING_INTERVAL} with
 * a count of the others ({@link ThrottledWarning}): a resolver that is down makes every request
 * fall back, and a line per request would flood the log exactly when the operator needs to read it
 * (the gateway always throttled; the embedded front ends logged every fallback until both shared
 * this step). Thread-safe.
 */
final class PlanStep {
  private static final System.Logger LOG = System.getLogger(PlanStep.class.getName());

  /** The least time between two log lines about plans falling back. */
  static final Duration WARNING_INTERVAL = Duration.ofSeconds(10);

  private final ThrottledWarning warning = new ThrottledWarning(WARNING_INTERVAL,
      line -> LOG.log(System.Logger.Level.WARNING, line));

  private final Plans plans;
  private final PlanResolver resolver;
  private final Duration deadline;

  PlanStep(Plans plans, PlanResolver resolver, Duration deadline) {
    this.plans = Objects.requireNonNull(plans, "plans");
    this.resolver = Objects.requireNonNull(resolver, "resolver");
    if (deadline == null || deadline.isNegative() || deadline.isZero()) {
      throw new IllegalArgumentException("plans deadline: " + deadline + "; expected more than 0");
    }
    this.deadline = deadline;
  }

  Plans plans() {
    return plans;
  }

  /** The request's plan (or its rejection), waiting on this thread at most the deadline. */
  Plans.Selection select(GateRequest request, RequestView view, Ticker ticker) {
    PlanResolution r;
    try {
      r = resolver.resolve(view).toCompletableFuture().get(deadline.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      r = late();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      r = new PlanResolution.Unavailable("interrupted");
    } catch (ExecutionException | RuntimeException e) {
      r = new PlanResolution.Unavailable("the resolver failed: " + e);
    }
    return selected(request, r, ticker);
  }

  /** As {@link #select}, without blocking: the deadline is a timeout on the resolver's stage. */
  CompletionStage<Plans.Selection> selectAsync(GateRequest request, RequestView view, Ticker ticker) {
    CompletableFuture<PlanResolution> r;
    try {
      r = resolver.resolve(view).toCompletableFuture().copy();
    } catch (RuntimeException e) {
      r = CompletableFuture.completedFuture(new PlanResolution.Unavailable("the resolver failed: " + e));
    }
    return r.completeOnTimeout(late(), deadline.toNanos(), TimeUnit.NANOSECONDS)
        .handle((resolution, e) -> selected(request,
            e == null ? resolution : new PlanResolution.Unavailable("the resolver failed: " + e), ticker));
  }

  private PlanResolution.Unavailable late() {
    return new PlanResolution.Unavailable("no answer within " + deadline.toMillis() + " ms");
  }

  private Plans.Selection selected(GateRequest request, PlanResolution r, Ticker ticker) {
    Plans.Selection s = plans.select(r == null ? new PlanResolution.Unavailable("the resolver answered null") : r);
    s.warning().ifPresent(w -> warning.warn(ticker, w + " (" + request.method() + " " + request.target() + ")"));
    return s;
  }

  /** 401 for an invalid credential, with {@code WWW-Authenticate: Bearer}. */
  GateResponse refusal(GateRequest request, PlanResolution.Rejected r, URI origin) {
    Refusal refusal = Refusal.builder(401).error(r.error()).detail(r.detail()).why(r.why()).origin(origin).build();
    RefusalFormat format = RefusalFormat.negotiate(request.header("Accept"));
    return GateResponses.refusal(401, List.of(Map.entry("WWW-Authenticate", "Bearer error=\"" + r.error() + "\"")), format,
        format.body(refusal, null), HeadroomMeters.INVALID_CREDENTIAL, HeadroomMeters.PLAN_POLICY);
  }
}
