package dev.headroom;

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
import org.junit.jupiter.api.Nested;

/** The algorithm specification suite ({@code dev.headroom.spec}) run against {@link InMemoryStore}. */
class InMemoryStoreSpecTest {

  static final StoreFixture FIXTURE = ticker -> InMemoryStore.builder().ticker(ticker).build();

  @Nested
  class FixedWindow extends FixedWindowSpec {
    @Override
    protected StoreFixture fixture() {
      return FIXTURE;
    }
  }

  @Nested
  class SlidingWindow extends SlidingWindowSpec {
    @Override
    protected StoreFixture fixture() {
      return FIXTURE;
    }
  }

  @Nested
  class NextQuota extends NextQuotaSpec {
    @Override
    protected StoreFixture fixture() {
      return FIXTURE;
    }
  }

  @Nested
  class TokenBucket extends TokenBucketSpec {
    @Override
    protected StoreFixture fixture() {
      return FIXTURE;
    }
  }

  @Nested
  class Concurrency extends ConcurrencySpec {
    @Override
    protected StoreFixture fixture() {
      return FIXTURE;
    }
  }

  @Nested
  class CostAndDebt extends CostAndDebtSpec {
    @Override
    protected StoreFixture fixture() {
      return FIXTURE;
    }
  }

  @Nested
  class AllOrNothing extends AllOrNothingSpec {
    @Override
    protected StoreFixture fixture() {
      return FIXTURE;
    }
  }

  @Nested
  class Decisions extends DecisionSpec {
    @Override
    protected StoreFixture fixture() {
      return FIXTURE;
    }
  }

  @Nested
  class ConcurrentAccess extends ConcurrentAccessSpec {
    @Override
    protected StoreFixture fixture() {
      return FIXTURE;
    }
  }
}
