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
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * An allowed request, from its decision to the end of its response (ARCHITECTURE.md, request step 7):
 * the RateLimit fields written for the status the application sets ({@link #writeFields}), and,
 * once the response is complete, exactly once ({@link #complete}, {@link #completeAsync}, or
 * {@link #unansweredAsync} when no response came):
 * <ul>
 * <li>the units of {@code requests} policies given back when the status does not count for the
 *   policy ({@link RouteRules#counting(String)}: a policy counting only failures, or only successes);
 *   a request that got no response counts in full, since nothing is given back on doubt;
 * <li>the units the response states in the route's {@link RouteRules#chargeHeader() charge header}
 *   (0 to the route's max; anything else charges nothing and is logged) charged on top to the
 *   route's {@code requests} policies;
 * <li>content bytes actually sent charged to {@code content-bytes} policies (after the fact,
 *   possibly into debt; none for HEAD, RFC 9110 section 9.3.2);
 * <li>concurrency leases released;
 * <li>the request's place in the route's adaptive limit given back, its latency and status the
 *   limit's sample ({@link AdaptiveConcurrency}).
 * </ul>
 * A store failure on the way is told to the listener, never thrown. Thread-safe.
 */
public final class Admission {
  private static final System.Logger LOG = System.getLogger(Admission.class.getName());

  /** A counted acquisition given back when the response's status does not count for its policy. */
  record Conditional(Acquisition acquisition, RouteRules.Counting counting) {}

  private final QuotaLimiter limiter;
  private final Gate.CompiledRoute route;
  private final Decision decision;
  /** The decision the fields are written from: the enforced one, with the shadow items sent. */
  private final Decision fields;
  private final List<Conditional> conditional;
  /** The counted {@code requests} acquisitions a charge header's units are added to. */
  private final List<Acquisition> chargeable;
  private final boolean chargesContent;
  private final Consumer<StoreException> failures;
  /** The request's place in the route's adaptive limit, given back with its sample at completion; null without one. */
  private final AdaptiveRoute.Permit permit;
  private final AtomicBoolean done = new AtomicBoolean();
  /** A stage already complete, shared: a minimal stage, which nobody can complete again. */
  private static final CompletionStage<Void> DONE = CompletableFuture.completedStage(null);

  Admission(QuotaLimiter limiter, Gate.CompiledRoute route, Decision decision, List<PolicyOutcome> shadowFields,
      List<Conditional> conditional, List<Acquisition> chargeable, boolean head, Consumer<StoreException> failures,
      AdaptiveRoute.Permit permit) {
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
    this.conditional = conditional;
    this.chargeable = chargeable;
    this.chargesContent = route.countsBytes && !head;
    this.failures = failures;
    this.permit = permit;
  }

  /**
   * Whether the request holds a place in its route's adaptive concurrency limit, whose sample
   * {@link #upstreamLatency} refines. Only then need a front end measure the upstream's time.
   */
  public boolean learns() {
    return permit != null;
  }

  /**
   * The front end measured the upstream's own time for this request: {@code latencyNanos} from
   * the request's sending to its response head, of which {@code ownDelayNanos} is the front end's
   * own delay (how late its event loop ran what was due, on average: time the upstream did not
   * spend). The route's adaptive limit learns from this at completion instead of the time from the
   * admission to the completion, which also counts the decision, the client's reading and the front
   * end's queue ({@code AdaptiveLimit}'s class comment: the own delay is discounted down to the
   * healthy latency, never below it). Call before {@link #completeAsync}; without an adaptive
   * limit, nothing happens.
   */
  public void upstreamLatency(long latencyNanos, long ownDelayNanos) {
    if (permit != null) {
      permit.measured(latencyNanos, ownDelayNanos);
    }
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

  /** As {@link #complete(int, long, List)} for a route without a charge header. */
  public void complete(int status, long contentBytes) {
    complete(status, contentBytes, List.of());
  }

  /**
   * The response is complete, with {@code status} and {@code contentBytes} sent, and
   * {@code chargeValues} the values of the route's charge header in it (empty when absent): gives
   * back, charges and releases (see the class comment), blocking while the store does. Once; later
   * calls do nothing.
   */
  public void complete(int status, long contentBytes, List<String> chargeValues) {
    if (!done.compareAndSet(false, true)) {
      return;
    }
    adaptive(status);
    long extra = statedCharge(chargeValues);
    try {
      for (Conditional c : conditional) {
        if (!c.counting().counts(status)) {
          limiter.store().refund(c.acquisition());
        }
      }
      for (Acquisition a : extra > 0 ? chargeable : List.<Acquisition>of()) {
        limiter.charge(a.policy(), a.key(), extra);
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
      leasesGiven();
    }
  }

  /** As {@link #completeAsync(int, long, List)} for a route without a charge header. */
  public CompletionStage<Void> completeAsync(int status, long contentBytes) {
    return completeAsync(status, contentBytes, List.of());
  }

  /**
   * As {@link #complete(int, long, List)}, without blocking the caller's thread (a front end on an
   * event loop): the store's asynchronous updates. The stage never fails; it completes when every
   * update has been applied (or given up on), possibly on a store's I/O thread. Once; later calls
   * complete at once.
   */
  public CompletionStage<Void> completeAsync(int status, long contentBytes, List<String> chargeValues) {
    if (!done.compareAndSet(false, true)) {
      return DONE;
    }
    adaptive(status);
    List<CompletableFuture<Void>> updates = null;
    for (Conditional c : conditional) {
      if (!c.counting().counts(status)) {
        updates = updates == null ? new ArrayList<>(2) : updates;
        updates.add(observed(() -> limiter.store().refundAsync(c.acquisition())));
      }
    }
    long extra = statedCharge(chargeValues);
    if (extra > 0) {
      for (Acquisition a : chargeable) {
        updates = updates == null ? new ArrayList<>(2) : updates;
        updates.add(observed(() -> limiter.chargeAsync(a.policy(), a.key(), extra)));
      }
    }
    return settle(updates, chargesContent ? contentBytes : 0);
  }

  /**
   * The request ended without a response (the client or the upstream left first): the request
   * counts in full (nothing is given back on doubt, nothing stated is charged), the content bytes
   * sent either way are charged and the leases released, without blocking. Once, as
   * {@link #completeAsync}.
   */
  public CompletionStage<Void> unansweredAsync(long contentBytes) {
    if (!done.compareAndSet(false, true)) {
      return DONE;
    }
    adaptive(-1);
    return settle(null, chargesContent ? contentBytes : 0);
  }

  /**
   * The admission never reached a front end (it had cancelled the decision): the request's place in
   * the route's adaptive limit is given back without a sample, its leases released; its units stay
   * counted (nothing is given back on doubt). Once, as {@link #completeAsync}.
   */
  void abandon() {
    if (!done.compareAndSet(false, true)) {
      return;
    }
    if (permit != null) {
      permit.abandon();
    }
    settle(null, 0);
  }

  /**
   * Gives back the request's place in the route's adaptive limit, if it took one, with its latency
   * and whether it failed ({@code status} 5xx, or -1: no response came) as the limit's sample.
   */
  private void adaptive(int status) {
    if (permit != null) {
      if (status < 0) {
        permit.unanswered();
      } else {
        permit.complete(status);
      }
    }
  }

  /** The store updates of the end of the request: {@code updates} (null for none), bytes charged, leases released. */
  private CompletionStage<Void> settle(List<CompletableFuture<Void>> updates, long bytes) {
    if (bytes > 0) {
      for (PolicyOutcome o : decision.outcomes()) {
        if (o.policy().unit() == QuotaUnit.CONTENT_BYTES) {
          updates = updates == null ? new ArrayList<>(2) : updates;
          updates.add(observed(() -> limiter.chargeAsync(o.policy(), o.key(), bytes)));
        }
      }
    }
    if (!decision.leases().isEmpty()) {
      updates = updates == null ? new ArrayList<>(1) : updates;
      updates.add(observed(() -> limiter.releaseAsync(decision)));
      leasesGiven();
    }
    if (updates == null) {
      return DONE;
    }
    if (updates.size() == 1) {
      return updates.get(0);
    }
    return CompletableFuture.allOf(updates.toArray(CompletableFuture[]::new));
  }

  /** Tells the gate's meters that this request's leases are given back (asked for; a failure is the store's). */
  private void leasesGiven() {
    if (route.released != null && !decision.leases().isEmpty()) {
      route.released.accept(decision);
    }
  }

  /** The units the response's charge header states: 0 without one, or when its value is not valid (logged). */
  private long statedCharge(List<String> values) {
    if (values.isEmpty() || chargeable.isEmpty()) {
      return 0;
    }
    OptionalLong v = CostHeader.parse(values, route.rules.maxCost());
    if (v.isEmpty()) {
      LOG.log(System.Logger.Level.WARNING, "response header {0}: value is not valid; expected a whole number from 0 to"
          + " {1}; nothing charged", route.rules.chargeHeader().orElse(""), route.rules.maxCost());
      return 0;
    }
    return v.getAsLong();
  }

  /** An update whose failure is told to the listener: the stage always completes normally. */
  private CompletableFuture<Void> observed(Supplier<CompletionStage<Void>> update) {
    CompletionStage<Void> stage;
    try {
      stage = update.get();
    } catch (RuntimeException e) {
      stage = CompletableFuture.failedFuture(e);
    }
    CompletableFuture<Void> f = stage.toCompletableFuture();
    if (f.isDone() && !f.isCompletedExceptionally()) {
      return f; // the usual case: nothing to observe, nothing allocated
    }
    return f.handle((ok, e) -> {
      Throwable why = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
      if (why instanceof StoreException) {
        failures.accept((StoreException) why);
      } else if (why != null) {
        failures.accept(new StoreException("the store failed to update: " + why, why));
      }
      return (Void) null;
    });
  }
}
