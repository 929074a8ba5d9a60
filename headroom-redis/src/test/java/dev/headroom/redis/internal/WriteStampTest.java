package dev.headroom.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * A decision queued behind a call in flight on its keys counts as written from the later of that
 * call's write and its own queueing (issue 17): before, one queued behind a call the I/O thread
 * had not encoded yet counted as unwritten until its own batch went out, so a slow Redis was
 * taken for this process's overload ({@code FaultsTest} under load).
 */
class WriteStampTest {

  @Test
  void queuedBehindACallNotYetWrittenCountsFromThatWrite() {
    WriteStamp inFlight = new WriteStamp(System.nanoTime());
    WriteStamp queued = new WriteStamp(System.nanoTime());
    queued.queuedBehind(inFlight);
    assertThat(queued.written()).isFalse();
    assertThat(queued.writer()).isNull();

    inFlight.markNow();
    assertThat(queued.written()).isTrue();
    assertThat(queued.writtenAt()).isEqualTo(inFlight.writtenAt());
  }

  @Test
  void queuedBehindACallAlreadyWrittenCountsFromItsQueueing() {
    WriteStamp inFlight = new WriteStamp(System.nanoTime());
    inFlight.markNow();
    WriteStamp queued = new WriteStamp(System.nanoTime());
    long before = System.nanoTime();
    queued.queuedBehind(inFlight);
    long after = System.nanoTime();
    assertThat(queued.written()).isTrue();
    assertThat(queued.writtenAt()).isBetween(before, after);
  }

  @Test
  void itsOwnEarlierWriteStillCounts() {
    WriteStamp inFlight = new WriteStamp(System.nanoTime());
    WriteStamp queued = new WriteStamp(System.nanoTime());
    queued.markNow(); // its own batch written before it recorded what it queued behind
    long own = queued.writtenAt();
    queued.queuedBehind(inFlight);
    inFlight.markNow();
    assertThat(queued.writtenAt()).isEqualTo(own);
  }
}
