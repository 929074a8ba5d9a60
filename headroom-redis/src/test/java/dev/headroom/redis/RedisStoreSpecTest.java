package dev.headroom.redis;

import dev.headroom.spec.AllOrNothingSpec;
import dev.headroom.spec.ConcurrencySpec;
import dev.headroom.spec.ConcurrentAccessSpec;
import dev.headroom.spec.CostAndDebtSpec;
import dev.headroom.spec.DecisionSpec;
import dev.headroom.spec.FixedWindowSpec;
import dev.headroom.spec.NextQuotaSpec;
import dev.headroom.spec.SlidingWindowSpec;
import dev.headroom.spec.StoreFixture;
import dev.headroom.spec.TokenBucketSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Nested;

/**
 * The core's algorithm specification suite ({@code dev.headroom.spec}), unchanged, against the
 * Redis store on the shared Redis, in test mode (the script takes the ManualTicker's time). Each
 * store gets its own key prefix; the keys are deleted afterwards.
 */
class RedisStoreSpecTest {

  private static final List<String> PREFIXES = new ArrayList<>();

  final StoreFixture fixture = ticker -> {
    String prefix = LocalRedis.uniquePrefix("spec");
    synchronized (PREFIXES) {
      PREFIXES.add(prefix);
    }
    return RedisStore.builder().uri(LocalRedis.URI).keyPrefix(prefix).ticker(ticker)
        .decisionDeadline(Duration.ofSeconds(5)).build();
  };

  @AfterAll
  static void deleteKeys() {
    synchronized (PREFIXES) {
      for (String p : PREFIXES) {
        LocalRedis.deleteAll(p);
      }
    }
  }

  @Nested
  class FixedWindow extends FixedWindowSpec {
    @Override
    protected StoreFixture fixture() {
      return fixture;
    }
  }

  @Nested
  class SlidingWindow extends SlidingWindowSpec {
    @Override
    protected StoreFixture fixture() {
      return fixture;
    }
  }

  @Nested
  class NextQuota extends NextQuotaSpec {
    @Override
    protected StoreFixture fixture() {
      return fixture;
    }
  }

  @Nested
  class TokenBucket extends TokenBucketSpec {
    @Override
    protected StoreFixture fixture() {
      return fixture;
    }
  }

  @Nested
  class Concurrency extends ConcurrencySpec {
    @Override
    protected StoreFixture fixture() {
      return fixture;
    }
  }

  @Nested
  class CostAndDebt extends CostAndDebtSpec {
    @Override
    protected StoreFixture fixture() {
      return fixture;
    }
  }

  @Nested
  class AllOrNothing extends AllOrNothingSpec {
    @Override
    protected StoreFixture fixture() {
      return fixture;
    }
  }

  @Nested
  class Decisions extends DecisionSpec {
    @Override
    protected StoreFixture fixture() {
      return fixture;
    }
  }

  @Nested
  class ConcurrentAccess extends ConcurrentAccessSpec {
    @Override
    protected StoreFixture fixture() {
      return fixture;
    }

    /** 20,000 round trips per test instead of the in-memory 400,000: the suite stays quick. */
    @Override
    protected int attemptsPerThread() {
      return 5_000;
    }
  }
}
