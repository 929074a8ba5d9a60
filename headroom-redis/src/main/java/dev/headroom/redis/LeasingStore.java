package dev.headroom.redis;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.Lease;
import dev.headroom.PartitionKey;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaPolicy;
import dev.headroom.Store;
import dev.headroom.StoreException;
import dev.headroom.Ticker;
import dev.headroom.redis.internal.SliceSize;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Quota leasing (ARCHITECTURE.md, scale path step 4): a {@link Store} that takes a slice of a partition's
 * quota from the store it wraps (normally a {@link RedisStore}) in one round trip and spends it
 * locally, so a hot key costs one Redis command per slice instead of one per request.
 *
 * <h2>How is this designed, and why?</h2>
 * A slice is an ordinary acquisition of {@code n} units ({@link Store#acquire}); an unused rest is an
 * ordinary {@link Store#refund}. So the central store needs nothing new, and the slice is taken
 * <em>atomically from the global count</em>: Redis has already counted every unit a node holds.
 * Per leased policy and partition a node keeps: the units it holds ({@code unspent}), the global
 * remaining {@code G} and reset {@code t} of the last reply and when it was asked, the local rate,
 * and when the slice expires. A request covered by {@code unspent} is decided locally, without I/O;
 * otherwise the node takes a new slice (concurrent requests of the key wait for the same take) or,
 * when the slice would be no larger than the request, asks the central store for the request alone.
 *
 * <p><b>Slice size</b> ({@link SliceSize}): {@code min(ceil(rate * targetInterval), floor(q *
 * maxFraction), floor(G * maxFraction))}, leased only when larger than the request's cost. The rate
 * is the units asked of the key locally (admitted or not: demand, so that a node refused for a
 * while does not shrink its share) since the previous take divided by the time since then,
 * averaged with the previous estimate; the first request of a key is always decided centrally (it
 * starts the clock), so a key seen once never holds a slice. Worked numbers for {@code q = 10,000}
 * per minute, target 100 ms, {@code maxFraction = 0.05}: at 2,000 requests/s a node leases 200
 * units (one command per 100 ms instead of 200); with 1,000 left globally it leases 50; with fewer
 * than 40 left every request is decided centrally, so the last units go to whichever node asks
 * first, in Redis's order.
 *
 * <h2>Over-admission: none for a fixed window</h2>
 * Units are removed from the window's count when the slice is taken, so the units admitted by all
 * nodes together never exceed {@code q} per window: a slice is spent only before the window it was
 * taken in ends (it expires at {@code sentAt + t}, which is no later than the true end because Redis
 * read its clock after the request was sent), and the rest is returned only while more than
 * {@link #RETURN_GUARD_NANOS} of that window is left (later it is dropped: the window is ending).
 * The cost is under-admission and unfairness while slices are held: a node can be refused while
 * another holds units. A node that crashes holding a slice loses those units until the window
 * ends. Limit: a refund delayed in the network past the guard would credit the next window.
 *
 * <h2>Over-admission for a token bucket: at most the units outstanding</h2>
 * A slice moves the bucket's TAT forward by {@code n} emission intervals at once (GCRA: {@code n*T}),
 * so the long-run rate is never exceeded. But units taken at {@code t0} and spent at {@code t1}
 * count as if spent at {@code t0}: meanwhile the bucket refills, so in a short interval the nodes
 * can admit the bucket's burst plus the units they hold. The excess is bounded by the units
 * outstanding in slices, and by {@code q * maxHold / w} per node (a slice expires {@code maxHold}
 * after its take; the rest is returned, which for GCRA is safe at any time). A crashed node's units
 * are lost until the bucket refills them ({@code n*T}).
 *
 * <h2>What a client sees</h2>
 * A locally decided request reports {@code r = G + unspent} after spending: the global count at the
 * last take, minus what this node spent of its slice since. It never exceeds what was globally left
 * when last asked; other nodes' spending since is not known (as for any reply already sent). {@code
 * t} is the reset of the last reply minus the time since. Refusals come from the central store,
 * with its {@code r}, {@code t} and Retry-After; when every policy of a request is leased, a
 * central refusal is repeated locally until its Retry-After (an exhausted hot key then costs no
 * round trip per request; units other nodes return meanwhile are seen only after it).
 *
 * <p>Policies that {@link Leasing#leases} does not name pass through to the wrapped store, in the same
 * round trip as a slice is not; a request mixing both is all or nothing: local units are reserved
 * first and put back if the central part refuses. {@link #charge} and {@link #release} go to the
 * wrapped store; {@link #refund} puts units back into a live slice. Memory: at most
 * {@link Leasing#maxKeys()} partitions hold state; beyond that requests are decided centrally.
 * Quiet keys and expired slices are returned by a daemon timer ({@link #returnIdleSlices()}).
 * The leasing store owns the wrapped store: {@link #close()} returns every slice, then closes it.
 *
 * <p>Thread-safe; the state of one partition is guarded by its own monitor, never held across I/O.
 */
public final class LeasingStore implements Store {

  /** A fixed-window slice is returned only while more than this much of its window is left. */
  static final long RETURN_GUARD_NANOS = 500_000_000L;

  /**
   * Rates are measured over at least 1 ms: two requests in the same instant say "fast", not
   * "infinitely fast" (which would lease the cap at once).
   */
  static final long MIN_RATE_SPAN_NANOS = 1_000_000L;

  /** How long {@link #close()} waits for returns already under way. */
  static final long CLOSE_WAIT_SECONDS = 10;

  /** How many times one request waits for a slice take before it is decided centrally. */
  static final int MAX_TAKE_ROUNDS = 2;

  private static final Logger LOG = LoggerFactory.getLogger(LeasingStore.class);

  private final Store delegate;
  private final Leasing options;
  private final Ticker ticker;
  private final long targetNanos;
  private final long maxHoldNanos;
  private final long idleNanos;
  private final ConcurrentHashMap<SliceKey, Slice> slices = new ConcurrentHashMap<>();
  private final ScheduledThreadPoolExecutor timer;
  private final AtomicBoolean closed = new AtomicBoolean();
  /** Serialises sweeps, so that a caller's sweep returns only when every quiet unit is back. */
  private final Object sweepLock = new Object();
  private final LongAdder slicesTaken = new LongAdder();
  private final LongAdder unitsReturned = new LongAdder();
  private final LongAdder localDecisions = new LongAdder();

  private LeasingStore(Store delegate, Leasing options) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
    this.options = Objects.requireNonNull(options, "leasing");
    this.ticker = options.ticker();
    this.targetNanos = options.targetInterval().toNanos();
    this.maxHoldNanos = options.maxHold().toNanos();
    this.idleNanos = options.idleReturn().toNanos();
    this.timer = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, "headroom-leasing");
      t.setDaemon(true);
      return t;
    });
    long period = Math.max(1_000_000L, Math.min(idleNanos, maxHoldNanos) / 2);
    timer.scheduleWithFixedDelay(this::sweepQuietly, period, period, TimeUnit.NANOSECONDS);
  }

  /** A store deciding {@code leasing}'s policies from local slices of {@code delegate}'s quota. */
  public static LeasingStore wrap(Store delegate, Leasing leasing) {
    return new LeasingStore(delegate, leasing);
  }

  /** The store this one takes slices from (and owns). */
  public Store delegate() {
    return delegate;
  }

  /** Slices taken from the wrapped store so far (one round trip each). */
  public long slicesTaken() {
    return slicesTaken.sum();
  }

  /** Units given back to the wrapped store so far (unused slices). */
  public long unitsReturned() {
    return unitsReturned.sum();
  }

  /** Acquisitions decided from a local slice, without a round trip. */
  public long localDecisions() {
    return localDecisions.sum();
  }

  /** Units this node holds for a partition now: counted by the central store, not yet spent. */
  public long unitsHeld(QuotaPolicy policy, PartitionKey key) {
    Slice s = slices.get(new SliceKey(policy, key));
    if (s == null) {
      return 0;
    }
    synchronized (s) {
      return s.unspent;
    }
  }

  @Override
  public Decision acquire(List<Acquisition> acquisitions) {
    try {
      return acquireAsync(acquisitions).toCompletableFuture().join();
    } catch (CompletionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException) {
        throw (RuntimeException) cause;
      }
      if (cause instanceof Error) {
        throw (Error) cause;
      }
      throw new StoreException("leasing: the wrapped store failed: " + cause, cause);
    }
  }

  @Override
  public CompletionStage<Decision> acquireAsync(List<Acquisition> acquisitions) {
    if (acquisitions.isEmpty()) {
      throw new IllegalArgumentException("acquisitions: expected at least one, got none");
    }
    boolean anyLeased = false;
    for (Acquisition a : acquisitions) {
      anyLeased |= leased(a.policy());
    }
    if (!anyLeased || closed.get()) {
      return delegate.acquireAsync(acquisitions);
    }
    return attempt(acquisitions, 0);
  }

  private boolean leased(QuotaPolicy policy) {
    return options.leases(policy);
  }

  /** One pass: reserve what slices cover, wait for takes, or send the rest to the wrapped store. */
  private CompletionStage<Decision> attempt(List<Acquisition> acquisitions, int round) {
    int n = acquisitions.size();
    PolicyOutcome[] outcomes = new PolicyOutcome[n];
    Slice[] reservedFrom = new Slice[n];
    Slice[] centralSlices = new Slice[n];
    long[] centralEpochs = new long[n];
    PolicyOutcome[] refusedLocally = new PolicyOutcome[n];
    List<Integer> central = new ArrayList<>(n);
    List<CompletableFuture<Void>> waits = new ArrayList<>(1);
    for (int i = 0; i < n; i++) {
      Acquisition a = acquisitions.get(i);
      if (!leased(a.policy()) || a.cost() == 0) {
        central.add(i);
        centralSlices[i] = leased(a.policy()) ? slices.get(new SliceKey(a.policy(), a.key())) : null;
        if (centralSlices[i] != null) {
          synchronized (centralSlices[i]) {
            centralEpochs[i] = centralSlices[i].takeEpoch;
          }
        }
        continue;
      }
      Slice s = slice(a);
      if (s == null) {
        central.add(i);
        continue;
      }
      long now = ticker.read();
      long giveBack = 0;
      synchronized (s) {
        if (round == 0) {
          s.askedSinceTake = plus(s.askedSinceTake, a.cost()); // demand, admitted or not
        }
        giveBack = s.expire(now);
        PolicyOutcome local = s.trySpend(a, now);
        if (local != null) {
          outcomes[i] = local;
          reservedFrom[i] = s;
        } else if (s.inflight != null) {
          waits.add(s.inflight);
        } else if (now < s.refusedUntil) {
          refusedLocally[i] = s.refusal(a, now);
        } else if (round < MAX_TAKE_ROUNDS && s.seen && s.sliceFor(now) > a.cost()) {
          if (s.returnable(now)) { // a rest too small for this request goes back; maxHold stays a bound
            giveBack += s.unspent;
          }
          s.unspent = 0;
          waits.add(take(s, s.sliceFor(now), now));
        } else {
          central.add(i);
          centralSlices[i] = s;
          centralEpochs[i] = s.takeEpoch;
        }
      }
      giveBackLater(s, giveBack);
    }
    if (!waits.isEmpty()) {
      undo(acquisitions, outcomes, reservedFrom);
      return CompletableFuture.allOf(waits.toArray(new CompletableFuture<?>[0]))
          .thenCompose(ignored -> attempt(acquisitions, round + 1));
    }
    boolean refused = false;
    for (int i = 0; i < n; i++) {
      refused |= refusedLocally[i] != null;
    }
    if (refused && central.isEmpty()) {
      // Every policy is leased and one of them refused centrally moments ago: refuse again here,
      // until the Retry-After the central store gave, with the units reserved put back.
      undo(acquisitions, outcomes, reservedFrom);
      for (int i = 0; i < n; i++) {
        if (refusedLocally[i] != null) {
          outcomes[i] = refusedLocally[i];
        } else if (outcomes[i] == null) {
          return attemptCentrally(acquisitions);
        }
      }
      localDecisions.increment();
      return CompletableFuture.completedFuture(Decision.of(List.of(outcomes)));
    }
    if (refused) {
      for (int i = 0; i < n; i++) {
        if (refusedLocally[i] != null) {
          central.add(i);
          centralSlices[i] = slices.get(new SliceKey(acquisitions.get(i).policy(), acquisitions.get(i).key()));
          if (centralSlices[i] != null) {
            synchronized (centralSlices[i]) {
              centralEpochs[i] = centralSlices[i].takeEpoch;
            }
          }
        }
      }
      central.sort(null);
    }
    for (int i = 0; i < n; i++) {
      if (reservedFrom[i] != null) {
        localDecisions.increment();
      }
    }
    if (central.isEmpty()) {
      return CompletableFuture.completedFuture(Decision.of(List.of(outcomes)));
    }
    List<Acquisition> asked = new ArrayList<>(central.size());
    for (int i : central) {
      asked.add(acquisitions.get(i));
    }
    long sentAt = ticker.read();
    CompletionStage<Decision> reply;
    try {
      reply = delegate.acquireAsync(asked);
    } catch (RuntimeException e) {
      undo(acquisitions, outcomes, reservedFrom);
      return CompletableFuture.failedFuture(e);
    }
    return reply.handle((d, ex) -> {
      if (ex != null) {
        undo(acquisitions, outcomes, reservedFrom);
        throw ex instanceof CompletionException ? (CompletionException) ex : new CompletionException(ex);
      }
      for (int j = 0; j < central.size(); j++) {
        int i = central.get(j);
        PolicyOutcome o = d.outcomes().get(j);
        outcomes[i] = o;
        Slice s = centralSlices[i];
        if (s != null) {
          synchronized (s) {
            s.learnCentral(o, sentAt, centralEpochs[i]);
          }
        }
      }
      if (!d.allowed()) {
        undo(acquisitions, outcomes, reservedFrom);
      }
      return Decision.of(List.of(outcomes));
    });
  }

  /** The whole request to the wrapped store (a locally refused request whose other outcomes are unknown). */
  private CompletionStage<Decision> attemptCentrally(List<Acquisition> acquisitions) {
    return delegate.acquireAsync(acquisitions);
  }

  /** The partition's state, created while fewer than {@code maxKeys} exist; null beyond. */
  private Slice slice(Acquisition a) {
    SliceKey k = new SliceKey(a.policy(), a.key());
    Slice s = slices.get(k);
    if (s == null || s.retiredUnsafe()) {
      if (slices.size() >= options.maxKeys()) {
        return null;
      }
      s = slices.compute(k, (key, old) -> old == null || old.retiredUnsafe() ? new Slice(a.policy(), a.key()) : old);
    }
    return s;
  }

  /** Starts a slice take; the caller holds {@code s}'s monitor. */
  private CompletableFuture<Void> take(Slice s, long units, long now) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    s.beginTake(now);
    s.inflight = done;
    Acquisition ask = Acquisition.of(s.policy, s.key, units);
    CompletionStage<Decision> reply;
    try {
      reply = delegate.acquireAsync(List.of(ask));
    } catch (RuntimeException e) {
      s.inflight = null;
      done.completeExceptionally(e);
      return done;
    }
    reply.whenComplete((d, ex) -> {
      synchronized (s) {
        s.inflight = null;
        if (ex == null) {
          PolicyOutcome o = d.outcomes().get(0);
          s.learn(o, now);
          s.takeEpoch++;
          if (d.allowed()) {
            s.unspent = plus(s.unspent, units);
            s.heldWindowEnd = plus(now, o.reset().toNanos());
            s.expiresAt = s.policy.algorithm() == Algorithm.FIXED_WINDOW
                ? Math.min(s.heldWindowEnd, plus(now, maxHoldNanos))
                : plus(now, maxHoldNanos);
            s.retired = false;
            slicesTaken.increment();
          }
        }
      }
      if (ex != null) {
        done.completeExceptionally(ex);
      } else {
        done.complete(null);
      }
    });
    return done;
  }

  /** Puts back units reserved locally for a request that was not admitted as a whole. */
  private void undo(List<Acquisition> acquisitions, PolicyOutcome[] outcomes, Slice[] reservedFrom) {
    for (int i = 0; i < reservedFrom.length; i++) {
      Slice s = reservedFrom[i];
      if (s == null) {
        continue;
      }
      long cost = acquisitions.get(i).cost();
      long orphan = 0;
      long now = ticker.read();
      synchronized (s) {
        if (s.retired) {
          orphan = s.returnable(now) ? cost : 0;
        } else {
          s.unspent = plus(s.unspent, cost);
        }
        PolicyOutcome o = outcomes[i];
        outcomes[i] = new PolicyOutcome(o.policy(), o.key(), cost, true, plus(o.remaining(), cost),
            o.reset().toNanos(), 0, null);
      }
      giveBackLater(s, orphan);
      reservedFrom[i] = null;
    }
  }

  /** Gives units back on the timer's thread; the caller checked, under the monitor, that it may. */
  private void giveBackLater(Slice s, long units) {
    if (units <= 0) {
      return;
    }
    try {
      timer.execute(() -> giveBack(s.policy, s.key, units));
    } catch (RejectedExecutionException closing) {
      giveBack(s.policy, s.key, units);
    }
  }

  private void giveBack(QuotaPolicy policy, PartitionKey key, long units) {
    delegate.refund(Acquisition.of(policy, key, units));
    unitsReturned.add(units);
  }

  @Override
  public void charge(Acquisition acquisition) {
    delegate.charge(acquisition);
  }

  /** Puts units back into the partition's live slice, or gives them to the wrapped store. */
  @Override
  public void refund(Acquisition acquisition) {
    if (!refundToSlice(acquisition)) {
      delegate.refund(acquisition);
    }
  }

  /** Whether the units went back into the partition's live slice. */
  private boolean refundToSlice(Acquisition acquisition) {
    Slice s = slices.get(new SliceKey(acquisition.policy(), acquisition.key()));
    if (s != null) {
      long now = ticker.read();
      synchronized (s) {
        if (!s.retired && s.unspent > 0 && now < s.expiresAt) {
          s.unspent = plus(s.unspent, acquisition.cost());
          return true;
        }
      }
    }
    return false;
  }

  @Override
  public void release(Lease lease) {
    delegate.release(lease);
  }

  @Override
  public CompletionStage<Void> chargeAsync(Acquisition acquisition) {
    return delegate.chargeAsync(acquisition);
  }

  /** As {@link #refund}: into the live slice, else given to the wrapped store without blocking. */
  @Override
  public CompletionStage<Void> refundAsync(Acquisition acquisition) {
    return refundToSlice(acquisition) ? CompletableFuture.completedFuture(null)
        : delegate.refundAsync(acquisition);
  }

  @Override
  public CompletionStage<Void> releaseAsync(Lease lease) {
    return delegate.releaseAsync(lease);
  }

  /**
   * Returns the slices of keys unused for {@link Leasing#idleReturn()} and of expired slices, and
   * forgets quiet keys. The store's timer calls this every {@code min(idleReturn, maxHold) / 2};
   * call it to return them now. Blocks while the wrapped store takes the units back.
   */
  public void returnIdleSlices() {
    synchronized (sweepLock) {
      sweep();
    }
  }

  private void sweep() {
    long now = ticker.read();
    for (Slice s : slices.values()) {
      long units;
      boolean returnable;
      synchronized (s) {
        boolean quiet = now - s.lastUse >= idleNanos;
        if (s.inflight != null || !(quiet || now >= s.expiresAt)) {
          continue;
        }
        units = s.unspent;
        returnable = s.returnable(now);
        s.unspent = 0;
        if (quiet) {
          s.retired = true;
          slices.remove(new SliceKey(s.policy, s.key), s);
        }
      }
      if (units > 0 && returnable) {
        giveBack(s.policy, s.key, units);
      }
    }
  }

  private void sweepQuietly() {
    try {
      returnIdleSlices();
    } catch (RuntimeException e) {
      LOG.warn("leasing: returning idle slices failed; they expire in the central store", e);
    }
  }

  /** Returns every slice that can still be returned, then closes the wrapped store. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    timer.shutdown(); // give-backs already queued still run; the periodic sweep stops
    try {
      if (!timer.awaitTermination(CLOSE_WAIT_SECONDS, TimeUnit.SECONDS)) {
        LOG.warn("leasing: slices were still being returned after {} s; closing anyway", CLOSE_WAIT_SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    long now = ticker.read();
    try {
      for (Slice s : slices.values()) {
        long units;
        boolean returnable;
        synchronized (s) {
          units = s.unspent;
          returnable = s.returnable(now);
          s.unspent = 0;
          s.retired = true;
        }
        if (units > 0 && returnable) {
          giveBack(s.policy, s.key, units);
        }
      }
      slices.clear();
    } finally {
      delegate.close();
    }
  }

  private record SliceKey(QuotaPolicy policy, PartitionKey key) {}

  /** One partition's leasing state; every field is guarded by the instance's monitor. */
  private final class Slice {
    final QuotaPolicy policy;
    final PartitionKey key;
    long unspent;
    boolean seen;
    long global;
    long knownAt;
    long resetAtKnown;
    long expiresAt = Long.MIN_VALUE;
    long lastTakeAt;
    /** Units asked of this partition since the last take, admitted or not: the local demand. */
    long askedSinceTake;
    double rate = Double.NaN;
    long lastUse;
    boolean clockStarted;
    /** For a fixed window: the (conservative) end of the window the held units were taken in. */
    long heldWindowEnd = Long.MIN_VALUE;
    /** Slice takes completed; a central reply sent under an older epoch may predate the last take. */
    long takeEpoch;
    /** Until when (local time) a request of this partition is refused without asking: the last central Retry-After. */
    long refusedUntil = Long.MIN_VALUE;
    CompletableFuture<Void> inflight;
    volatile boolean retired;

    Slice(QuotaPolicy policy, PartitionKey key) {
      this.policy = policy;
      this.key = key;
    }

    /** Read without the monitor: the map's compute must never wait for a partition's monitor. */
    boolean retiredUnsafe() {
      return retired;
    }

    /** Empties an expired slice; returns the units to give back (0 when they cannot be). */
    long expire(long now) {
      if (unspent == 0 || now < expiresAt) {
        return 0;
      }
      long units = unspent;
      unspent = 0;
      return returnable(now) ? units : 0;
    }

    /** The local outcome when the slice covers the cost; null when it does not. */
    PolicyOutcome trySpend(Acquisition a, long now) {
      lastUse = now;
      if (retired || unspent < a.cost() || now >= expiresAt) {
        return null;
      }
      unspent -= a.cost();
      long r = Math.min(policy.quota(), plus(global, unspent));
      long t = Math.max(0, resetAtKnown - (now - knownAt));
      return new PolicyOutcome(policy, key, a.cost(), true, r, t, 0, null);
    }

    /** A refusal repeated locally: {@code r = 0}, Retry-After what is left of the central one. */
    PolicyOutcome refusal(Acquisition a, long now) {
      long t = Math.max(0, resetAtKnown - (now - knownAt));
      return new PolicyOutcome(policy, key, a.cost(), false, 0, t, refusedUntil - now, null);
    }

    /** The slice to take now, by {@link SliceSize}. */
    long sliceFor(long now) {
      return SliceSize.of(estimatedRate(now), targetNanos, policy.quota(), options.maxFraction(), knownGlobal(now));
    }

    double estimatedRate(long now) {
      if (!clockStarted) {
        return 0;
      }
      long elapsed = Math.max(MIN_RATE_SPAN_NANOS, now - lastTakeAt);
      double observed = askedSinceTake * 1e9 / elapsed;
      return Double.isNaN(rate) ? observed : (rate + observed) / 2;
    }

    void beginTake(long now) {
      rate = estimatedRate(now);
      lastTakeAt = now;
      askedSinceTake = 0;
    }

    /** Units globally left by the last reply, aged: a new fixed window is whole, a bucket refills. */
    long knownGlobal(long now) {
      long age = Math.max(0, now - knownAt);
      if (policy.algorithm() == Algorithm.FIXED_WINDOW) {
        return age >= resetAtKnown ? policy.quota() : global;
      }
      return Math.min(policy.quota(), plus(global, age / policy.emissionIntervalNanos()));
    }

    /**
     * Records the reply to a request decided centrally. A reply sent before a slice take completed
     * may describe the count before the take: it would count the slice twice (once in {@code G},
     * once in {@code unspent}), so it only moves the rate clock. Within one fixed window {@code G}
     * only falls (replies of concurrent requests may arrive out of order).
     */
    void learnCentral(PolicyOutcome o, long sentAt, long epochAtSend) {
      if (epochAtSend != takeEpoch) {
        return;
      }
      long known = global;
      boolean sameWindow = seen && policy.algorithm() == Algorithm.FIXED_WINDOW
          && sentAt - knownAt < resetAtKnown;
      learn(o, sentAt);
      if (!o.allowed() && !o.exceedsQuota()) {
        refusedUntil = plus(sentAt, o.retryAfter().toNanos());
      }
      if (sameWindow) {
        global = Math.min(known, global);
      }
    }

    /** Records a reply of the central store, sent at {@code sentAt}. */
    void learn(PolicyOutcome o, long sentAt) {
      seen = true;
      global = o.remaining();
      knownAt = sentAt;
      resetAtKnown = o.reset().toNanos();
      lastUse = Math.max(lastUse, sentAt);
      if (!clockStarted) {
        clockStarted = true;
        lastTakeAt = sentAt;
      }
    }

    /** Whether units held now may go back to the central store without crediting a later window. */
    boolean returnable(long now) {
      if (policy.algorithm() != Algorithm.FIXED_WINDOW) {
        return true;
      }
      return plus(now, RETURN_GUARD_NANOS) < heldWindowEnd;
    }
  }

  /** {@code a + b}, clamped to the range of {@code long}: times and counts here never wrap. */
  private static long plus(long a, long b) {
    long r = a + b;
    if (((a ^ r) & (b ^ r)) < 0) {
      return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
    return r;
  }
}
