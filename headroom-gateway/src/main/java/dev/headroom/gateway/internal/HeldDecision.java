package dev.headroom.gateway.internal;

import dev.headroom.Decision;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaLimiter;
import dev.headroom.gateway.config.RouteCost;
import java.util.List;

/**
 * A store decision an {@link Exchange} holds until it ends: then its concurrency leases are
 * released and its content-bytes policies ({@code contentBytes}, which admitted the request at
 * cost 0, "not in debt") are charged the body bytes the exchange transferred. Made once, where the
 * decision is taken ({@link QuotaCheck}, {@link VendCall}); settled once, by the exchange's end,
 * with its {@link Settlement} (count modes, a charge the response states), if any.
 */
record HeldDecision(Decision decision, List<PolicyOutcome> contentBytes, Settlement settlement) {
  /** A decision with nothing to settle but its leases and content bytes. */
  HeldDecision(Decision decision, List<PolicyOutcome> contentBytes) {
    this(decision, contentBytes, null);
  }

  /** The upstream's response head: what the {@link Settlement}, if any, needs of it. */
  void response(int status, ResponseHead h, RouteCost cost) {
    if (settlement != null) {
      settlement.response(status, cost.chargeHeader().map(h::get).orElse(null));
    }
  }

  /**
   * Releases the leases and charges {@code bytes} (request and response bodies) to each
   * content-bytes policy, without blocking: this runs on an event loop, which may be the one the
   * store's Redis connection reads its replies on (EventLoops).
   */
  void settle(QuotaLimiter limiter, long bytes) {
    if (settlement != null) {
      settlement.settle(limiter);
    }
    Settlement.logged(limiter.releaseAsync(decision), () -> "release the leases of a decision");
    if (bytes <= 0) {
      return;
    }
    for (PolicyOutcome o : contentBytes) {
      Settlement.logged(limiter.chargeAsync(o.policy(), o.key(), bytes),
          () -> "charge " + bytes + " bytes to policy " + o.policy().name());
    }
  }
}
