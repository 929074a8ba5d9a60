package dev.headroom.gateway.internal;

import dev.headroom.Acquisition;
import dev.headroom.QuotaLimiter;
import dev.headroom.gateway.config.PolicyRules.CountMode;
import dev.headroom.gateway.config.RouteCost;
import dev.headroom.enforcement.RequestCost;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What an allowed request still owes or is owed once its response is known, settled once when the
 * exchange ends: a policy that counts only failures (or only successes) gives the units back when
 * the response's status does not count (the request was counted when decided, so that concurrent
 * attempts are bounded too); a route with {@code cost.chargeHeader} charges the units the
 * upstream's response states on top (0 to {@code cost.max}; anything else is not charged and is
 * logged). An exchange whose response never arrived counts in full: nothing is given back on doubt.
 *
 * <p>Confined to the exchange's event loop.
 */
final class Settlement {
  private static final Logger LOG = LoggerFactory.getLogger(Settlement.class);

  private record Conditional(Acquisition acquisition, CountMode mode) {}

  private final RouteCost cost;
  private final List<Conditional> conditional = new ArrayList<>();
  private final List<Acquisition> chargeable = new ArrayList<>();
  private int status = -1;
  private long extra;

  Settlement(RouteCost cost) {
    this.cost = cost;
  }

  /** A policy's acquisition, allowed: given back at the end when its count mode says the response does not count. */
  void counted(Acquisition a, CountMode mode) {
    if (mode != CountMode.ALL) {
      conditional.add(new Conditional(a, mode));
    }
    if (cost.chargeHeader().isPresent()) {
      chargeable.add(a);
    }
  }

  boolean isEmpty() {
    return conditional.isEmpty() && chargeable.isEmpty();
  }

  /** The response head: its status, and the charge its {@code cost.chargeHeader} states. */
  void response(int status, String chargeValue) {
    this.status = status;
    if (chargeValue != null) {
      OptionalLong v = RequestCost.parse(chargeValue, cost.max());
      if (v.isEmpty()) {
        LOG.warn("response header {}: value is not valid; expected a whole number from 0 to {}; nothing charged",
            cost.chargeHeader().orElse(""), cost.max());
      } else {
        extra = v.getAsLong();
      }
    }
  }

  /** Settles once: refunds and charges, without blocking (see {@link HeldDecision#settle}). */
  void settle(QuotaLimiter limiter) {
    if (status >= 0) {
      for (Conditional c : conditional) {
        if (!c.mode().counts(status)) {
          logged(limiter.store().refundAsync(c.acquisition()),
              () -> "give back the count of " + c.acquisition().policy().name());
        }
      }
    }
    if (extra > 0) {
      for (Acquisition a : chargeable) {
        logged(limiter.chargeAsync(a.policy(), a.key(), extra), () -> "charge the response's " + extra + " units to "
            + a.policy().name());
      }
    }
  }

  /**
   * Logs an update that failed ({@code what} could not be done, said only then); a store's update
   * that cannot reach its store follows the store's failure policy, so nothing waits on it here.
   */
  static void logged(CompletionStage<Void> update, Supplier<String> what) {
    CompletableFuture<Void> f = update.toCompletableFuture();
    if (f.isDone() && !f.isCompletedExceptionally()) {
      return;
    }
    f.whenComplete((v, e) -> {
      if (e != null) {
        LOG.warn("could not {}: {}", what.get(), e.toString());
      }
    });
  }
}
