package dev.headroom.servlet;

import dev.headroom.http.body.Refusal;
import dev.headroom.http.body.RefusalFormat;
import dev.headroom.http.partition.RequestView;
import dev.headroom.http.plan.Plan;
import dev.headroom.http.plan.PlanResolution;
import dev.headroom.http.plan.PlanResolver;
import dev.headroom.http.plan.Plans;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The filter's plan step: the request's plan from the {@link PlanResolver}, waited for on the
 * request's thread (a servlet request holds its thread anyway) at most {@code deadline}; a
 * resolver that throws, fails, answers null or does not answer in time is
 * {@link PlanResolution.Unavailable}, so the fallback plan ({@link Plans#select}); an invalid
 * credential is 401 with a Graceful Boundaries body and {@code WWW-Authenticate: Bearer}
 * (RFC 6750 section 3). Fallbacks are logged through {@link System.Logger} (the platform's
 * logging, which SLF4J and the containers bridge). Thread-safe.
 */
final class PlanSelection {
  private static final System.Logger LOG = System.getLogger(PlanSelection.class.getName());

  private final Plans plans;
  private final PlanResolver resolver;
  private final Duration deadline;

  PlanSelection(Plans plans, PlanResolver resolver, Duration deadline) {
    this.plans = Objects.requireNonNull(plans, "plans");
    this.resolver = Objects.requireNonNull(resolver, "resolver");
    if (deadline.isNegative() || deadline.isZero()) {
      throw new IllegalArgumentException("plans deadline: " + deadline + "; expected more than 0");
    }
    this.deadline = deadline;
  }

  Plans plans() {
    return plans;
  }

  /** The request's plan, or null after answering 401 for an invalid credential. */
  Plan choose(HttpServletRequest request, HttpServletResponse response, RequestView view, URI origin) throws IOException {
    Plans.Selection s = select(request, view);
    if (s.rejected().isPresent()) {
      refuse(request, response, s.rejected().get(), origin);
      return null;
    }
    return s.plan();
  }

  Plans.Selection select(HttpServletRequest request, RequestView view) {
    PlanResolution r;
    try {
      r = resolver.resolve(view).toCompletableFuture().get(deadline.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      r = new PlanResolution.Unavailable("no answer within " + deadline.toMillis() + " ms");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      r = new PlanResolution.Unavailable("interrupted");
    } catch (ExecutionException | RuntimeException e) {
      r = new PlanResolution.Unavailable("the resolver failed: " + e);
    }
    Plans.Selection s = plans.select(r == null ? new PlanResolution.Unavailable("the resolver answered null") : r);
    s.warning().ifPresent(w -> LOG.log(System.Logger.Level.WARNING, w + " (" + request.getMethod() + " "
        + request.getRequestURI() + ")"));
    return s;
  }

  void refuse(HttpServletRequest request, HttpServletResponse response, PlanResolution.Rejected r, URI origin)
      throws IOException {
    Refusal refusal = Refusal.builder(401).error(r.error()).detail(r.detail()).why(r.why()).origin(origin).build();
    response.setStatus(401);
    response.setHeader("WWW-Authenticate", "Bearer error=\"" + r.error() + "\"");
    RefusalFormat format = RefusalFormat.negotiate(request.getHeader("Accept"));
    RefusalResponses.writeBody(request, response, format, format.body(refusal, null));
  }
}
