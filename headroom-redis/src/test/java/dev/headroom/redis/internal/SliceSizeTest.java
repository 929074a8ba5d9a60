package dev.headroom.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The worked numbers of {@link SliceSize}'s class comment: q = 10,000, target 100 ms, 0.05. */
class SliceSizeTest {

  static final long TARGET = 100_000_000L;

  @Test
  void aSliceLastsTheTargetIntervalOfTheLocalRate() {
    assertThat(SliceSize.of(2_000, TARGET, 10_000, 0.05, 10_000)).isEqualTo(200);
    assertThat(SliceSize.of(2_000, TARGET, 10_000, 0.05, 4_000)).isEqualTo(200);
  }

  @Test
  void aSliceShrinksWithTheGlobalRemainingSoTheLastUnitsAreCentral() {
    assertThat(SliceSize.of(2_000, TARGET, 10_000, 0.05, 1_000)).isEqualTo(50);
    assertThat(SliceSize.of(2_000, TARGET, 10_000, 0.05, 39)).isEqualTo(1); // no larger than a request: central
    assertThat(SliceSize.of(2_000, TARGET, 10_000, 0.05, 0)).isZero();
    assertThat(SliceSize.of(2_000, TARGET, 10_000, 0.05, -5)).isZero();
  }

  @Test
  void aFastKeyIsCappedAndASlowKeyLeasesNothing() {
    assertThat(SliceSize.of(20_000, TARGET, 10_000, 0.05, 10_000)).isEqualTo(500);
    assertThat(SliceSize.of(Double.POSITIVE_INFINITY, TARGET, 10_000, 0.05, 10_000)).isEqualTo(500);
    assertThat(SliceSize.of(5, TARGET, 10_000, 0.05, 10_000)).isEqualTo(1);
    assertThat(SliceSize.of(0, TARGET, 10_000, 0.05, 10_000)).isZero();
  }
}
