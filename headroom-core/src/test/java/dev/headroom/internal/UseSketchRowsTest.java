package dev.headroom.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The sketch's rows are independent ({@link UseSketch#cell}): a newcomer that shares a refused
 * key's cells in two rows still reads as a newcomer. With the rows derived by double hashing from
 * two halves of one hash, meeting in rows 0 and 1 meant meeting in all four, and such a newcomer
 * was refused with the refused key's use: about one in 8 million one-request keys of a flood at
 * the smallest width (AdmissionFilterTest caught it).
 */
class UseSketchRowsTest {

  @Test
  void aNewcomerMeetingARefusedKeyInTwoRowsIsStillANewcomer() {
    UseSketch sketch = new UseSketch(UseSketch.MIN_WIDTH, false);
    long seed = 0x5EED;
    long now = 1_000;
    long refused = UseSketch.hash(seed, "refused");
    sketch.fold(refused, 50, now + 1_000_000, now);
    assertThat(sketch.read(refused, now, 0, 50)).as("the refused key is remembered").isEqualTo(50);

    int found = 0;
    // W^2 = 16.8 million pairs of cells in rows 0 and 1: scan enough keys to meet it a few times
    for (int i = 0; i < 40_000_000 && found < 2; i++) {
      long h = UseSketch.hash(seed, Integer.toString(i));
      if (sketch.cell(h, 0) == sketch.cell(refused, 0) && sketch.cell(h, 1) == sketch.cell(refused, 1)) {
        found++;
        boolean allFour = sketch.cell(h, 2) == sketch.cell(refused, 2) && sketch.cell(h, 3) == sketch.cell(refused, 3);
        assertThat(allFour).as("key %d meets the refused key in rows 0 and 1, and so in all four", i).isFalse();
        assertThat(sketch.read(h, now, 0, 50)).as("key %d reads as a newcomer", i).isZero();
      }
    }
    assertThat(found).as("keys meeting the refused key in rows 0 and 1").isPositive();
  }
}
