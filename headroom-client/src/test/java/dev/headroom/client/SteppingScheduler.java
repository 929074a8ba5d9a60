package dev.headroom.client;

import dev.headroom.ManualTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Virtual time for concurrent tests: waits are queued by deadline and released in order by
 * {@link #run}, which moves the {@link ManualTicker} to the next deadline only when no request is on
 * the wire (so that no response is served at a time its request was not sent at). The only wall-clock
 * waiting is for loopback sockets to answer, bounded.
 */
final class SteppingScheduler implements Scheduler {

  private record Pending(long deadline, long seq, CompletableFuture<Void> future) {}

  private final ManualTicker ticker;
  private final PriorityQueue<Pending> queue = new PriorityQueue<>((a, b) -> a.deadline != b.deadline
      ? Long.compare(a.deadline, b.deadline) : Long.compare(a.seq, b.seq));
  private final AtomicLong seq = new AtomicLong();
  private final AtomicInteger onTheWire = new AtomicInteger();

  SteppingScheduler(ManualTicker ticker) {
    this.ticker = ticker;
  }

  @Override
  public CompletableFuture<Void> delay(Duration delay) {
    if (delay.isZero() || delay.isNegative()) {
      return CompletableFuture.completedFuture(null);
    }
    CompletableFuture<Void> f = new CompletableFuture<>();
    synchronized (queue) {
      queue.add(new Pending(ticker.read() + delay.toNanos(), seq.incrementAndGet(), f));
    }
    return f;
  }

  /** The request field carrying the virtual instant the request was sent at (nanoseconds). */
  static final String SENT_AT = "X-Test-Sent-At";

  /** A network interceptor counting requests on the wire and stamping each with {@link #SENT_AT}. */
  Interceptor wire() {
    return chain -> {
      onTheWire.incrementAndGet();
      java.net.http.HttpRequest sent = java.net.http.HttpRequest.newBuilder(chain.request(), (n, v) -> true)
          .header(SENT_AT, Long.toString(ticker.read())).build();
      return chain.proceed(sent).whenComplete((e, t) -> onTheWire.decrementAndGet());
    };
  }

  /** Releases waits in deadline order until every future is done. */
  void run(List<? extends CompletableFuture<?>> futures) throws InterruptedException {
    long wallDeadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (!futures.stream().allMatch(CompletableFuture::isDone)) {
      if (System.nanoTime() > wallDeadline) {
        throw new AssertionError("virtual-time run did not finish within 60 s of wall time");
      }
      long before = seq.get();
      Thread.sleep(3); // loopback sockets answering; bounded by the deadline above
      if (onTheWire.get() > 0 || seq.get() != before) {
        continue;
      }
      List<CompletableFuture<Void>> due = new ArrayList<>();
      synchronized (queue) {
        Pending first = queue.poll();
        if (first == null) {
          continue;
        }
        long now = ticker.read();
        if (first.deadline > now) {
          ticker.advanceNanos(first.deadline - now);
        }
        due.add(first.future);
        while (!queue.isEmpty() && queue.peek().deadline <= ticker.read()) {
          due.add(queue.poll().future);
        }
      }
      due.forEach(f -> f.complete(null));
    }
  }
}
