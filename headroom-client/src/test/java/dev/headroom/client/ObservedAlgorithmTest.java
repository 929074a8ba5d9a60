package dev.headroom.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.client.ObservedAlgorithm.Kind;
import org.junit.jupiter.api.Test;

/**
 * What successive reports of one budget say about the server's algorithm (draft-09 section 7 leaves
 * the algorithm to the server; the reports' {@code r} and {@code t}, whole seconds rounded up per
 * section 4.1.2, still show it). Times in milliseconds; a report is (r, admitted, received, t).
 */
class ObservedAlgorithmTest {

  private static final long MS = 1_000_000L;
  private static final long Q = 10;
  private static final long W = 5_000 * MS;

  private final ObservedAlgorithm seen = new ObservedAlgorithm();
  private long answers;

  private void report(long r, long admittedMs, long receivedMs, long tSeconds) {
    seen.report(r, Q, W, admittedMs * MS, receivedMs * MS, tSeconds * 1_000 * MS, Long.MIN_VALUE, answers, answers);
    answers++;
  }

  @Test
  void aFixedWindowIsRecognisedByItsJumpAndItsResetNarrowedByEveryReport() {
    // The window resets at 12.30 s.
    report(9, 10_000, 10_010, 3);
    assertThat(seen.low()).isEqualTo(12_000 * MS);
    assertThat(seen.high()).isEqualTo(13_010 * MS);
    report(8, 10_500, 10_510, 2);
    assertThat(seen.low()).isEqualTo(12_000 * MS);
    assertThat(seen.high()).isEqualTo(12_510 * MS);
    assertThat(seen.kind()).isEqualTo(Kind.UNKNOWN);
    // Past the reset r is back near the quota: the jump.
    report(9, 12_520, 12_530, 5);
    assertThat(seen.kind()).isEqualTo(Kind.FIXED_WINDOW);
    assertThat(seen.high()).isEqualTo(17_530 * MS);
  }

  /**
   * Four callers racing a reset (the first request 4.986 s into a 5 s window): the first answer
   * recorded from the new window may be of a request the server decided after others of that window
   * that are still on the wire, so its {@code r} is lower than the old window's least without
   * anything coming back, as a fixed window's reset allows. Read as a refill, the fixed window was
   * spent as a sliding window (1.57x of the ideal schedule in a benchmark run at that phase).
   */
  @Test
  void aNewWindowsFirstAnswerBehindConcurrentRequestsIsNotReadAsARefill() {
    // A fixed window resetting at 5.00 s and every 5 s after.
    report(9, 4_986, 4_996, 1);
    report(8, 4_996, 5_006, 1);
    // Four requests sent at 5.006 s are decided at 5.010 to 5.030 s (r = 9, 8, 7, 6); the one that
    // said 7 is recorded first, with three others on the wire.
    seen.report(7, Q, W, 5_006 * MS, 5_040 * MS, 5_000 * MS, Long.MIN_VALUE, answers, answers, 3);
    answers++;
    assertThat(seen.kind()).isEqualTo(Kind.UNKNOWN);
    // The next reset: r back up, the fixed window.
    report(9, 10_010, 10_020, 5);
    assertThat(seen.kind()).isEqualTo(Kind.FIXED_WINDOW);
  }

  /**
   * Ten requests decided at one instant against a sliding window, 0.6 s before a boundary of its
   * windows: the estimate's time until empty grows with each unit ({@code t} from 1 to 6), and the
   * answers are recorded in any order. Recorded after a later-reset one, a report whose bounds lie
   * wholly before the current window's looks like a window already over; but no fixed window of
   * {@code w} resets less than {@code w} after a reset that was after that report's lower bound.
   */
  @Test
  void aBurstsAnswersOutOfOrderStillShowASlidingWindowsResetMoving() {
    seen.report(9, Q, W, 4_400 * MS, 4_400 * MS, 1_000 * MS, Long.MIN_VALUE, 0, 0, 9);
    seen.report(0, Q, W, 4_400 * MS, 4_400 * MS, 6_000 * MS, Long.MIN_VALUE, 0, 1, 9);
    assertThat(seen.kind()).isEqualTo(Kind.UNKNOWN);
    // r=8, t=4: the reset in (7.40, 8.40], wholly before (9.40, 10.40].
    seen.report(8, Q, W, 4_400 * MS, 4_400 * MS, 4_000 * MS, Long.MIN_VALUE, 0, 2, 8);
    assertThat(seen.kind()).isEqualTo(Kind.REFILLING);
  }

  /**
   * A window of one request, then the first request of the next: both say {@code q - 1}, as a fixed
   * window's reset would and as a refill that moved the reset later would. Neither is read into it;
   * the next reports tell them apart.
   */
  @Test
  void aWindowOfOneRequestKeepsBothAFixedWindowAndARefillPossible() {
    // A fixed window resetting at 11.00 s and every 5 s after.
    report(9, 10_000, 10_010, 1);
    report(9, 11_020, 11_030, 5);
    assertThat(seen.kind()).isEqualTo(Kind.UNKNOWN);
    report(8, 11_100, 11_110, 5);
    assertThat(seen.kind()).isEqualTo(Kind.UNKNOWN);
    // The next reset: r back up, the fixed window.
    report(9, 16_020, 16_030, 5);
    assertThat(seen.kind()).isEqualTo(Kind.FIXED_WINDOW);
  }

  @Test
  void aWindowOfOneRequestThenAResetMovingLaterIsARefill() {
    // A sliding window: the first request at 4.9 s of a window of 5 s, the next at 5.1 s.
    report(9, 4_900, 4_910, 2);
    report(9, 5_100, 5_110, 5);
    assertThat(seen.kind()).isEqualTo(Kind.UNKNOWN);
    // Its estimate is empty later with every unit spent: the reset moves past what was said.
    report(8, 5_600, 5_610, 7);
    assertThat(seen.kind()).isEqualTo(Kind.REFILLING);
  }

  @Test
  void anAlignedFixedWindowCarriesItsPhaseToTheNextWindow() {
    report(9, 10_000, 10_010, 3);
    report(8, 10_500, 10_510, 2);
    // Reset in (12.00, 12.51]; the next window's first request at 12.52 s.
    report(9, 12_520, 12_530, 5);
    assertThat(seen.aligned()).isFalse();
    assertThat(seen.alignmentProbe()).hasValue((12_520 + 5_000 - 1_000 - 50) * MS);
    // The held-back unit, decided at 16.47 s, says t=1: the reset is at most 17.48 s, before the
    // window's first request plus w (17.52 s), which a window anchored at that request never is.
    report(0, 16_470, 16_480, 1);
    assertThat(seen.aligned()).isTrue();
    assertThat(seen.high()).isEqualTo(17_480 * MS);
    // The next window is narrowed by this one's bounds, moved on by w.
    report(9, 17_490, 17_500, 5);
    assertThat(seen.low()).isEqualTo(21_520 * MS);
    assertThat(seen.high()).isEqualTo(22_480 * MS);
  }

  @Test
  void aWindowAnchoredAtItsFirstRequestIsNeverTakenForAligned() {
    // express-rate-limit's MemoryStore: each window ends w after its first request was decided.
    report(9, 0, 10, 5);
    report(0, 20, 30, 5);
    report(9, 5_010, 5_020, 5);
    report(0, 5_030, 5_040, 5);
    report(0, 9_020, 9_030, 1);
    assertThat(seen.kind()).isEqualTo(Kind.FIXED_WINDOW);
    assertThat(seen.aligned()).isFalse();
  }

  @Test
  void aTokenBucketRefillsBeforeTheResetAndSaysTheTimeUntilFull() {
    // q=10 per 5 s: one unit per 0.5 s; t = (q - r) * 0.5 s rounded up.
    report(9, 0, 10, 1);
    report(8, 20, 30, 1);
    report(7, 40, 50, 2);
    // 1.2 s later, two units have come back.
    report(8, 1_250, 1_260, 1);
    assertThat(seen.kind()).isEqualTo(Kind.TOKEN_BUCKET);
  }

  @Test
  void aSlidingWindowRefillsButIsNoTokenBucket() {
    // Two-counter sliding window: t is the time until the estimate is empty, beyond w here.
    report(9, 0, 10, 3);
    report(8, 20, 30, 6);
    report(7, 40, 50, 7);
    assertThat(seen.kind()).isEqualTo(Kind.REFILLING);
  }

  @Test
  void answersOutOfOrderAreNoRefill() {
    // Two requests admitted together; the one decided first (r=8) is answered last.
    seen.report(7, Q, W, 0, 10 * MS, 2_000 * MS, Long.MIN_VALUE, 0, 0);
    seen.report(8, Q, W, 0, 12 * MS, 2_000 * MS, Long.MIN_VALUE, 0, 1);
    assertThat(seen.kind()).isEqualTo(Kind.UNKNOWN);
  }
}
