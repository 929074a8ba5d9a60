package dev.headroom.client;

import dev.headroom.ManualTicker;
import java.net.http.HttpRequest;
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

  /**
   * A network interceptor counting requests on the wire and stamping each with {@link #SENT_AT}. A
   * request leaves the wire once the client has done with its answer: the future handed back is
   * completed first, which runs what the client does with the answer (its budgets, the caller's
   * next request) on this thread, and only then is the request uncounted. Uncounted as the answer
   * arrived, time moved on while the client had yet to read it whenever that thread was descheduled
   * for the few milliseconds {@link #run} polls at (on a loaded machine), and the client read the
   * answer seconds late in virtual time.
   */
  Interceptor wire() {
    return chain -> {
      onTheWire.incrementAndGet();
      HttpRequest sent = HttpRequest.newBuilder(chain.request(), (n, v) -> true)
          .header(SENT_AT, Long.toString(ticker.read())).build();
      CompletableFuture<Exchange> answered = new CompletableFuture<>();
      chain.proceed(sent).whenComplete((e, t) -> {
        try {
          if (t != null) {
            answered.completeExceptionally(t);
          } else {
            answered.complete(e);
          }
        } finally {
          onTheWire.decrementAndGet();
        }
      });
      return answered;
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
