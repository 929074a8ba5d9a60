package dev.headroom.redis.internal;

/**
 * The slice-size rule of quota leasing ({@code dev.headroom.redis.LeasingStore}), as one pure
 * function so that the store and the cluster simulation in headroom-benchmarks apply the same rule.
 *
 * <pre>
 *   demand = ceil(rate * targetInterval)           units this node spends in one target interval
 *   cap    = floor(q * maxFraction)                no node holds more than this share of the quota
 *   tail   = floor(globalRemaining * maxFraction)  shrinks as the partition runs out
 *   slice  = min(demand, cap, tail)
 * </pre>
 * A slice no larger than the request's cost is not worth a lease: the request is decided centrally,
 * by one round trip for itself. So the last units of a quota (below {@code 2 / maxFraction} left)
 * are always decided by the central store, one request at a time.
 *
 * <p>Worked numbers: {@code q = 10,000} per minute, target 100 ms, {@code maxFraction = 0.05}
 * ({@code cap = 500}). A node seeing 2,000 requests per second locally has {@code demand = 200}:
 * it leases 200 units while 4,000 or more are left globally, 50 when 1,000 are left
 * ({@code tail = 50}), and decides every request centrally once fewer than 40 are left
 * ({@code tail <= 1}). A node seeing 20,000 requests per second is capped at 500 units (25 ms of
 * its traffic); a node seeing 5 per second would lease 1 unit, which is no lease: its requests go
 * to Redis one by one, as without leasing.
 */
public final class SliceSize {

  private SliceSize() {}

  /**
   * The slice to lease.
   *
   * @param unitsPerSecond the key's observed local rate; infinite or NaN when unknown but fast
   *     (then the cap applies)
   * @param targetNanos how long a slice should last at that rate
   * @param quota {@code q} of the policy
   * @param maxFraction the largest share of {@code q} one slice may hold, in (0, 1]
   * @param globalRemaining the last known units left in the central store
   * @return units to lease, from 0; a value no larger than the request's cost means "decide
   *     centrally"
   */
  public static long of(double unitsPerSecond, long targetNanos, long quota, double maxFraction,
      long globalRemaining) {
    long cap = (long) Math.floor(quota * maxFraction);
    long tail = (long) Math.floor(Math.max(0, globalRemaining) * maxFraction);
    double wanted = unitsPerSecond * (targetNanos / 1e9);
    long demand = Double.isNaN(wanted) || wanted >= Long.MAX_VALUE ? Long.MAX_VALUE
        : (long) Math.ceil(Math.max(0, wanted));
    return Math.max(0, Math.min(demand, Math.min(cap, tail)));
  }
}
