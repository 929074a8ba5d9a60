package dev.headroom.enforcement;

import dev.headroom.Acquisition;
import dev.headroom.Decision;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaUnit;
import dev.headroom.StoreException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * An allowed request, from its decision to the end of its response (ARCHITECTURE.md, request step 7):
 * the RateLimit fields written for the status the application sets ({@link #writeFields}), and,
 * once the response is complete, exactly once ({@link #complete} or {@link #completeAsync}):
 * <ul>
 * <li>the units of {@code requests} policies given back when the status does not count for the
 *   route ({@link RouteRules.Counting}: a route counting only failures, or only successes);
 * <li>content bytes actually sent charged to {@code content-bytes} policies (after the fact,
 *   possibly into debt; none for HEAD, RFC 9110 section 9.3.2);
 * <li>concurrency leases released.
 * </ul>
 * A store failure on the way is told to the listener, never thrown. Thread-safe.
 */
public final class Admission {
  private final QuotaLimiter limiter;
  private final Gate.CompiledRoute route;
  private final Decision decision;
  /** The decision the fields are written from: the enforced one, with the shadow items sent. */
  private final Decision fields;
  private final List<Acquisition> conditional;
  private final boolean chargesContent;
  private final Consumer<StoreException> failures;
  private final AtomicBoolean done = new AtomicBoolean();

  Admission(QuotaLimiter limiter, Gate.CompiledRoute route, Decision decision, List<PolicyOutcome> shadowFields,
      List<Acquisition> acquisitions, boolean head, Consumer<StoreException> failures) {
    this.limiter = limiter;
    this.route = route;
    this.decision = decision;
    if (shadowFields.isEmpty()) {
      this.fields = decision;
    } else {
      List<PolicyOutcome> all = new ArrayList<>(decision.outcomes());
      all.addAll(shadowFields);
      this.fields = Decision.of(all);
    }
    // only units a requests policy counted can be given back
    this.conditional = route.rules.counting() == RouteRules.Counting.ALL ? List.of()
        : acquisitions.stream().filter(a -> a.cost() > 0 && a.policy().unit() == QuotaUnit.REQUESTS).toList();
    this.chargesContent = route.countsBytes && !head;
    this.failures = failures;
  }

  /** The route that admitted the request. */
  public RouteRules route() {
    return route.rules;
  }

  /** The decision that admitted it. */
  public Decision decision() {
    return decision;
  }

  /**
   * Whether content bytes are charged at completion: the route has a {@code content-bytes} policy
   * and the request is not HEAD. Only then need the front end count the bytes it sends.
   */
  public boolean chargesContent() {
    return chargesContent;
  }

  /**
   * Writes the route's RateLimit fields for a response of {@code status} (status rules such as
   * omit-on-redirect apply, draft-09 section 6), with the items of the shadow policies whose fields
   * the route sends, through {@code sink}.
   *
   * @return the Retry-After written, if any
   */
  public Optional<Duration> writeFields(int status, BiConsumer<String, String> sink) {
    return route.headers.write(fields, status, sink);
  }

  /**
   * The response is complete, with {@code status} and {@code contentBytes} sent: gives back,
   * charges and releases (see the class comment), blocking while the store does. Once; later calls
   * do nothing.
   */
  public void complete(int status, long contentBytes) {
    if (!done.compareAndSet(false, true)) {
      return;
    }
    try {
      if (!route.rules.counting().counts(status)) {
        for (Acquisition a : conditional) {
          limiter.store().refund(a);
        }
      }
      long n = chargesContent ? contentBytes : 0;
      if (n > 0) {
        for (PolicyOutcome o : decision.outcomes()) {
          if (o.policy().unit() == QuotaUnit.CONTENT_BYTES) {
            limiter.charge(o.policy(), o.key(), n);
          }
        }
      }
    } catch (StoreException e) {
      failures.accept(e);
    } finally {
      try {
        limiter.release(decision);
      } catch (StoreException e) {
        failures.accept(e);
      }
    }
  }

  /**
   * As {@link #complete}, without blocking the caller's thread (a front end on an event loop): the
   * store's asynchronous updates. The stage never fails; it completes when every update has been
   * applied (or given up on), possibly on a store's I/O thread. Once; later calls complete at once.
   */
  public CompletionStage<Void> completeAsync(int status, long contentBytes) {
    if (!done.compareAndSet(false, true)) {
      return CompletableFuture.completedFuture(null);
    }
    List<CompletableFuture<Void>> updates = new ArrayList<>();
    if (!route.rules.counting().counts(status)) {
      for (Acquisition a : conditional) {
        updates.add(observed(() -> limiter.store().refundAsync(a)));
      }
    }
    long n = chargesContent ? contentBytes : 0;
    if (n > 0) {
      for (PolicyOutcome o : decision.outcomes()) {
        if (o.policy().unit() == QuotaUnit.CONTENT_BYTES) {
          updates.add(observed(() -> limiter.chargeAsync(o.policy(), o.key(), n)));
        }
      }
    }
    if (!decision.leases().isEmpty()) {
      updates.add(observed(() -> limiter.releaseAsync(decision)));
    }
    if (updates.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    return CompletableFuture.allOf(updates.toArray(CompletableFuture[]::new));
  }

  /** An update whose failure is told to the listener: the stage always completes normally. */
  private CompletableFuture<Void> observed(java.util.function.Supplier<CompletionStage<Void>> update) {
    CompletionStage<Void> stage;
    try {
      stage = update.get();
    } catch (RuntimeException e) {
      stage = CompletableFuture.failedFuture(e);
    }
    return stage.handle((ok, e) -> {
      Throwable why = e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
      if (why instanceof StoreException) {
        failures.accept((StoreException) why);
      } else if (why != null) {
        failures.accept(new StoreException("the store failed to update: " + why, why));
      }
      return (Void) null;
    }).toCompletableFuture();
  }
}
