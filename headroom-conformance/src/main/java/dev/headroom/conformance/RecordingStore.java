package dev.headroom.conformance;

import dev.headroom.Acquisition;
import dev.headroom.Decision;
import dev.headroom.Lease;
import dev.headroom.PartitionKey;
import dev.headroom.Store;
import dev.headroom.StoreException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A {@link Store} that decides through another and records every release and charge, so that the
 * specification can wait, with a bound, for the moment an adapter finishes a response: a client
 * may read the last byte before the server has run its completion code, and only the store sees
 * when that happens.
 *
 * <p>Thread-safe.
 */
public final class RecordingStore implements Store {

  /** One release or charge, as the store received it. */
  public static final class Event {
    private final String kind;
    private final String policy;
    private final PartitionKey key;
    private final long units;

    Event(String kind, String policy, PartitionKey key, long units) {
      this.kind = kind;
      this.policy = policy;
      this.key = key;
      this.units = units;
    }

    /** {@code release} or {@code charge}. */
    public String kind() {
      return kind;
    }

    public String policy() {
      return policy;
    }

    public PartitionKey key() {
      return key;
    }

    /** Units released or charged. */
    public long units() {
      return units;
    }

    @Override
    public String toString() {
      return kind + " " + policy + "/" + key.value() + " " + units;
    }
  }

  private final Store delegate;
  private final List<Event> events = new ArrayList<>();
  private final Set<String> failing = ConcurrentHashMap.newKeySet();

  public RecordingStore(Store delegate) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
  }

  /**
   * Makes every decision that involves the named policy fail with a {@link StoreException}, as a
   * store that lost its backend does: what a front end answers then is part of the specification.
   */
  public void failFor(String policy) {
    failing.add(Objects.requireNonNull(policy, "policy"));
  }

  private void failIfAsked(List<Acquisition> acquisitions) {
    if (!failing.isEmpty()) {
      for (Acquisition a : acquisitions) {
        if (failing.contains(a.policy().name())) {
          throw new StoreException("the specification's store fails decisions of policy '" + a.policy().name() + "'");
        }
      }
    }
  }

  @Override
  public Decision acquire(List<Acquisition> acquisitions) {
    failIfAsked(acquisitions);
    return delegate.acquire(acquisitions);
  }

  @Override
  public CompletionStage<Decision> acquireAsync(List<Acquisition> acquisitions) {
    try {
      failIfAsked(acquisitions);
    } catch (StoreException e) {
      return CompletableFuture.failedFuture(e);
    }
    return delegate.acquireAsync(acquisitions);
  }

  @Override
  public void charge(Acquisition acquisition) {
    delegate.charge(acquisition);
    record(new Event("charge", acquisition.policy().name(), acquisition.key(), acquisition.cost()));
  }

  @Override
  public void refund(Acquisition acquisition) {
    delegate.refund(acquisition);
    record(new Event("refund", acquisition.policy().name(), acquisition.key(), acquisition.cost()));
  }

  @Override
  public void release(Lease lease) {
    delegate.release(lease);
    record(new Event("release", lease.policy().name(), lease.key(), lease.units()));
  }

  @Override
  public CompletionStage<Void> chargeAsync(Acquisition acquisition) {
    return delegate.chargeAsync(acquisition).thenRun(() -> record(new Event("charge", acquisition.policy().name(),
        acquisition.key(), acquisition.cost())));
  }

  @Override
  public CompletionStage<Void> refundAsync(Acquisition acquisition) {
    return delegate.refundAsync(acquisition).thenRun(() -> record(new Event("refund", acquisition.policy().name(),
        acquisition.key(), acquisition.cost())));
  }

  @Override
  public CompletionStage<Void> releaseAsync(Lease lease) {
    return delegate.releaseAsync(lease).thenRun(() -> record(new Event("release", lease.policy().name(), lease.key(),
        lease.units())));
  }

  @Override
  public void close() {
    delegate.close();
  }

  private synchronized void record(Event e) {
    events.add(e);
    notifyAll();
  }

  /**
   * Waits for the first event of a kind, policy and partition key, and removes it.
   *
   * @throws AssertionError when none comes within the timeout
   */
  public synchronized Event await(String kind, String policy, String key, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      for (int i = 0; i < events.size(); i++) {
        Event e = events.get(i);
        if (e.kind.equals(kind) && e.policy.equals(policy) && e.key.value().equals(key)) {
          return events.remove(i);
        }
      }
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        throw new AssertionError("expected a " + kind + " of policy '" + policy + "' for partition '"
            + key + "' within " + timeout + "; recorded: " + events);
      }
      wait(Math.max(1, left / 1_000_000));
    }
  }
}
