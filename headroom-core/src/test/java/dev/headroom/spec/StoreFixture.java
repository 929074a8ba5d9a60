package dev.headroom.spec;

import dev.headroom.Store;
import dev.headroom.Ticker;

/**
 * How the algorithm specification suite obtains the {@link Store} under test.
 *
 * <p>Every specification in {@code dev.headroom.spec} drives time through a
 * {@link dev.headroom.ManualTicker} and talks to the store only through the public {@link Store} and
 * {@link dev.headroom.QuotaLimiter} API, so that any store can run it: the in-memory store in
 * headroom-core, the Redis store (in test mode, taking its time from the ticker) in headroom-redis.
 */
@FunctionalInterface
public interface StoreFixture {

  /**
   * A new store whose decisions read time from {@code ticker} only. Counters left over from other
   * tests must not be visible; the suite also uses a fresh partition-key prefix for each test.
   */
  Store newStore(Ticker ticker);
}
