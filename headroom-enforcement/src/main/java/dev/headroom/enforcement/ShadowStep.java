package dev.headroom.enforcement;

import dev.headroom.Acquisition;
import dev.headroom.Decision;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.StoreException;
import dev.headroom.Ticker;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * The gate's shadow policies ({@link RouteRules.Builder#shadowPolicy}): each decided on its own, so
 * that one shadow refusal never spares another shadow policy's count and never touches the
 * enforced policies' all-or-nothing decision; counted like any policy, told to the listener
 * ({@link GateListener#shadowDecided}, {@link GateListener#shadowFailed}), logged when it would
 * refuse at most once per {@link Gate#SHADOW_WARNING_INTERVAL} with a count of the others, never
 * refusing. Thread-safe.
 */
final class ShadowStep {
  private static final CompletableFuture<List<PolicyOutcome>> NO_FIELDS = CompletableFuture.completedFuture(List.of());

  private final QuotaLimiter limiter;
  private final AllowLists allows;
  private final GateListener listener;
  private final Ticker ticker;
  private final ThrottledWarning warning = new ThrottledWarning(Gate.SHADOW_WARNING_INTERVAL,
      line -> System.getLogger(Gate.class.getName()).log(System.Logger.Level.INFO, line));

  ShadowStep(QuotaLimiter limiter, AllowLists allows, GateListener listener, Ticker ticker) {
    this.limiter = limiter;
    this.allows = allows;
    this.listener = listener;
    this.ticker = ticker;
  }

  /**
   * Each shadow policy the request does not bypass decided alone, reported to the listener, logged
   * when it would refuse, its lease (if any) given back at once; a store failure is ignored.
   * Asynchronously, nobody waits for them, except for the RateLimit items of those whose fields
   * the route sends ({@link RouteRules#sendsShadowFields}; headroom-http {@link ShadowFields#item}),
   * which the stage completes with.
   */
  CompletionStage<List<PolicyOutcome>> decide(Gate.CompiledRoute route, RoutedView view, long cost, boolean async) {
    List<QuotaPolicy> shadows = route.rules.shadowPolicies();
    if (shadows.isEmpty()) {
      return NO_FIELDS;
    }
    List<CompletableFuture<PolicyOutcome>> sent = new ArrayList<>();
    for (int i = 0; i < shadows.size(); i++) {
      QuotaPolicy p = shadows.get(i);
      if (!route.rules.appliesTo(p.name(), view.method())) {
        continue;
      }
      if (allows.bypasses(p.name(), view)) {
        try {
          listener.bypassed(route.rules, p.name());
        } catch (RuntimeException ignored) {
          // A listener cannot fail the request (GateListener contract).
        }
        continue;
      }
      boolean send = route.rules.sendsShadowFields(p.name());
      List<Acquisition> one = List.of(Acquisition.of(p, route.shadowDerivations.get(i).derive(view), Gate.units(p, cost)));
      CompletableFuture<PolicyOutcome> item;
      if (async) {
        try {
          item = limiter.acquireAsync(one).thenApply(d -> {
            limiter.releaseAsync(d);
            shadowDecided(route.rules, p, d);
            return ShadowFields.item(d.outcomes().get(0));
          }).toCompletableFuture().exceptionally(e -> shadowFailed(route.rules, p, e)); // never affects the request
        } catch (StoreException e) {
          item = CompletableFuture.completedFuture(shadowFailed(route.rules, p, e));
        }
      } else {
        Decision d;
        try {
          d = limiter.acquire(one);
          limiter.release(d);
        } catch (StoreException e) {
          shadowFailed(route.rules, p, e);
          continue; // a shadow decision never affects the request
        }
        shadowDecided(route.rules, p, d);
        item = CompletableFuture.completedFuture(ShadowFields.item(d.outcomes().get(0)));
      }
      if (send) {
        sent.add(item);
      }
    }
    if (sent.isEmpty()) {
      return NO_FIELDS;
    }
    return CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new))
        .thenApply(x -> sent.stream().map(CompletableFuture::join).filter(Objects::nonNull).toList());
  }

  private void shadowDecided(RouteRules route, QuotaPolicy p, Decision d) {
    try {
      listener.shadowDecided(route, d);
    } catch (RuntimeException ignored) {
      // A listener cannot fail the request (GateListener contract).
    }
    if (!d.allowed()) {
      warning.warn(ticker, "shadow policy " + p.name() + " would refuse a request of " + route.template()
          + " (retry after " + d.retryAfterSeconds() + " s); allowed");
    }
  }

  /** A shadow decision the store could not make, told to the listener; no item is sent for it. */
  private PolicyOutcome shadowFailed(RouteRules route, QuotaPolicy p, Throwable e) {
    Throwable why = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    try {
      listener.shadowFailed(route, p, why instanceof StoreException se ? se
          : new StoreException("the store failed to decide: " + why, why));
    } catch (RuntimeException ignored) {
      // A listener cannot fail the request (GateListener contract).
    }
    return null;
  }
}
