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

  /**
   * A hot key: every batch's first member queues behind the batch before it, then is written
   * itself. The links must not form a chain (before, each deadline check walked every earlier
   * batch and kept them all reachable: half the client's CPU on a hot key, and a stack overflow
   * after enough batches).
   */
  @Test
  void aHotKeysBatchesNeverFormAChain() {
    WriteStamp previous = new WriteStamp(System.nanoTime());
    previous.markNow();
    for (int i = 0; i < 500_000; i++) {
      WriteStamp next = new WriteStamp(System.nanoTime());
      next.queuedBehind(previous);
      next.markNow();
      previous = next;
    }
    WriteStamp last = new WriteStamp(System.nanoTime());
    last.queuedBehind(previous);
    assertThat(last.written()).isTrue();
    assertThat(last.writtenAt()).isGreaterThanOrEqualTo(previous.writtenAt());
  }

  @Test
  void aStampQueuedBehindAnUnwrittenCallThatQueuedBehindAnotherSeesThroughBoth() {
    WriteStamp first = new WriteStamp(System.nanoTime());
    WriteStamp second = new WriteStamp(System.nanoTime());
    second.queuedBehind(first);
    WriteStamp third = new WriteStamp(System.nanoTime());
    third.queuedBehind(second);
    assertThat(third.written()).isFalse();
    first.markNow();
    assertThat(third.written()).isTrue();
    assertThat(third.writtenAt()).isGreaterThanOrEqualTo(first.writtenAt());
    assertThat(second.writer()).isNull(); // not written by a Netty event loop
  }
}
