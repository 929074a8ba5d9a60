package dev.headroom.gateway.internal;

import dev.headroom.Acquisition;
import dev.headroom.Decision;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaLimiter;
import dev.headroom.gateway.config.Policy;
import dev.headroom.enforcement.ShadowFields;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.LoggerFactory;

/**
 * Policies in shadow mode: each decided on its own (so that one shadow refusal never spares
 * another shadow policy's count, and never touches the enforced policies' all-or-nothing decision),
 * counted like any policy, metered ({@code headroom_decisions_total} with {@code shadow-allowed} /
 * {@code shadow-refused}) and logged when it would refuse (at most once per
 * {@link #WARNING_INTERVAL}, with a count of the others), never refusing. With
 * {@code shadowFields}, a shadow policy adds its item to the RateLimit fields: as decided when it
 * allows, and as {@code r=0} with {@code t} the time until it would allow when it would refuse
 * ({@link ShadowFields}: an item of an allowed response, never a refusal). A shadow decision the store cannot make is metered ({@code shadow-failed}) and
 * ignored. Leases of shadow concurrency policies without fields are given back at once.
 */
final class ShadowCheck {
  /** The least time between two log lines about shadow refusals. */
  static final Duration WARNING_INTERVAL = Duration.ofSeconds(10);

  private static final ThrottledWarning WARNING = new ThrottledWarning(WARNING_INTERVAL,
      LoggerFactory.getLogger(ShadowCheck.class)::warn);

  private ShadowCheck() {}

  /**
   * The shadow decisions of a request.
   *
   * @param fields the items of shadow policies whose fields are sent ({@link ShadowFields}); null when none
   */
  record Result(Decision fields) {
    static final Result NONE = new Result(null);

    /** The enforced decision with the shadow fields added, for the response's RateLimit fields. */
    Decision merge(Decision enforced) {
      if (fields == null) {
        return enforced;
      }
      List<PolicyOutcome> all = new ArrayList<>(enforced.outcomes());
      all.addAll(fields.outcomes());
      return Decision.of(all);
    }

    /** Gives back the shadow leases when the request goes no further. */
    void release(QuotaLimiter limiter) {
      if (fields != null) {
        Settlement.logged(limiter.releaseAsync(fields), () -> "release the leases of a shadow decision");
      }
    }
  }

  static CompletableFuture<Result> decide(Exchange ex, List<Policy> shadows, List<Acquisition> acquisitions) {
    if (shadows.isEmpty()) {
      return CompletableFuture.completedFuture(Result.NONE);
    }
    List<CompletableFuture<PolicyOutcome>> each = new ArrayList<>(shadows.size());
    for (int i = 0; i < shadows.size(); i++) {
      Policy p = shadows.get(i);
      CompletableFuture<Decision> f;
      try {
        f = ex.state.limiter.acquireAsync(List.of(acquisitions.get(i))).toCompletableFuture();
      } catch (RuntimeException e) {
        f = CompletableFuture.failedFuture(e);
      }
      each.add(f.handle((d, e) -> outcome(ex, p, d, e)));
    }
    return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new)).thenApply(v -> {
      List<PolicyOutcome> fields = new ArrayList<>();
      for (CompletableFuture<PolicyOutcome> f : each) {
        PolicyOutcome o = f.join();
        if (o != null) {
          fields.add(o);
        }
      }
      return fields.isEmpty() ? Result.NONE : new Result(Decision.of(fields));
    });
  }

  /** Meters and logs one shadow decision; the outcome to send as fields, or null. */
  private static PolicyOutcome outcome(Exchange ex, Policy p, Decision d, Throwable e) {
    if (e != null || d == null) {
      ex.state.metrics.decision(p.name(), "shadow-failed");
      return null;
    }
    PolicyOutcome o = d.outcomes().get(0);
    ex.state.metrics.decision(p.name(), o.allowed() ? "shadow-allowed" : "shadow-refused");
    if (!o.allowed()) {
      WARNING.warn(ex.state.ticker, "shadow policy " + p.name() + " would refuse " + ex.request.method().name()
          + " " + ex.route.route().name() + " (retry after " + o.retryAfter().toSeconds() + " s); allowed");
    }
    if (!p.rules().shadowFields()) {
      Settlement.logged(ex.state.limiter.releaseAsync(d), () -> "release the leases of a shadow decision");
      return null;
    }
    return ShadowFields.item(o); // an allowed lease, if any, is kept until the exchange ends
  }
}
