package dev.headroom.internal;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.Lease;
import dev.headroom.PartitionKey;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaPolicy;
import dev.headroom.Ticker;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The engine of {@link dev.headroom.InMemoryStore}.
 *
 * <h2>Layout</h2>
 * One {@link Table} per policy name and algorithm (a changed policy with the same name and
 * algorithm keeps its counters, so a configuration reload resets nothing), each holding a
 * {@link PartitionTable}: an open-addressing table of the partition keys' strings and one state per
 * key, a {@code long} (the GCRA theoretical arrival time) for token buckets, an immutable
 * {@link WindowState} or {@link Concurrency.Leases} for the others. Decisions on tracked keys are
 * lock-free: one probe and one CAS per policy; a token-bucket decision allocates nothing on the
 * {@link #tryAcquire} path. The algorithms themselves are the pure functions of {@link Gcra},
 * {@link FixedWindow}, {@link SlidingWindow} and {@link Concurrency}; this class only stores their
 * states.
 *
 * <h2>All or nothing</h2>
 * A request with one policy is one CAS loop. A request with several is decided in two phases:
 * every policy is first evaluated without writing; if any refuses, nothing was written. Otherwise
 * each is committed in turn, and if a concurrent request took the last unit in between, the
 * commits already made are refunded. The refusal is then exact, and the refunded units were held
 * only for that instant.
 *
 * <h2>Bounded memory</h2>
 * At most {@code maxKeys} keys are tracked: a new key reserves its place in {@link #size} before it
 * is inserted. A key whose state has expired (a full bucket, a past window, no live lease) equals
 * an absent key and is removed whenever the evictor passes it. The evictor runs when a new key
 * arrives at a full store, and for a small slice every {@link #SWEEP_INTERVAL} new keys. When the
 * store is full of live keys, the new key evicts the live key closest to expiry among
 * {@link #EVICTION_SAMPLE} sampled ones: that partition forgets its count (it may be admitted up
 * to one quota more than the policy allows), which is the documented price of a flood of distinct
 * keys; memory stays bounded. An evicted key's state is first retired by CAS, so a decision racing
 * with the eviction either lands before it or sees the retirement and starts again on a fresh key:
 * no update is lost. Admitting a new key takes its table's lock; decisions on tracked keys never
 * do, except that one on a key being moved by a table rebuild waits for the rebuild to finish
 * ({@link PartitionTable}). Expiry is judged on the sample: when every key of a sample is live, one
 * of them is evicted even if expired keys remain elsewhere, so a few live evictions can happen
 * before the store is truly full of live keys; each one is counted. A new key reserves its place
 * before it enters a table, so inserts racing at a full store never take the count above
 * {@code maxKeys}.
 */
public final class LocalStore {

  /** How many live keys the evictor looks at to choose a live victim when the store is full. */
  static final int EVICTION_SAMPLE = 16;

  /** Every this many new keys, the evictor sweeps a slice of the store for expired keys. */
  static final int SWEEP_INTERVAL = 1024;

  /** How many live keys one periodic sweep looks at. */
  static final int SWEEP_SLICE = 256;

  /** A sweep looks at no more than this many slots (empty ones included) per live key it wants. */
  static final int SWEEP_SCAN_FACTOR = 8;

  /** The TAT of a key never seen: far in the past, so the bucket is full. */
  static final long EMPTY_TAT = Long.MIN_VALUE + 1;

  private final Ticker ticker;
  private final long maxKeys;
  private final ConcurrentHashMap<QuotaPolicy, Binding> bindings = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Table> tablesByName = new ConcurrentHashMap<>();
  private final CopyOnWriteArrayList<Table> tables = new CopyOnWriteArrayList<>();
  private final AtomicLong size = new AtomicLong();
  private final AtomicLong insertions = new AtomicLong();
  private final AtomicLong evictedLive = new AtomicLong();
  private final AtomicLong leaseIds = new AtomicLong();
  private final ReentrantLock evictor = new ReentrantLock();
  private int cursorTable; // guarded by evictor
  private int cursorSlot; // guarded by evictor

  public LocalStore(Ticker ticker, long maxKeys) {
    this.ticker = ticker;
    this.maxKeys = maxKeys;
  }

  /** The keys of one policy name and algorithm, and the latest version of that policy. */
  private static final class Table implements PartitionTable.StateTest {
    final Algorithm algorithm;
    volatile QuotaPolicy policy;
    final PartitionTable partitions;

    Table(QuotaPolicy policy) {
      this.algorithm = policy.algorithm();
      this.policy = policy;
      this.partitions = new PartitionTable(algorithm == Algorithm.TOKEN_BUCKET);
    }

    Object initialRef() {
      switch (algorithm) {
        case TOKEN_BUCKET:
          return null;
        case CONCURRENCY:
          return Concurrency.Leases.EMPTY;
        default:
          return WindowState.EMPTY;
      }
    }

    /** When a state will equal an absent key's. */
    long expiresAt(Object ref) {
      QuotaPolicy p = policy;
      switch (algorithm) {
        case FIXED_WINDOW:
          return FixedWindow.expiresAt(p, (WindowState) ref);
        case SLIDING_WINDOW:
          return SlidingWindow.expiresAt(p, (WindowState) ref);
        default:
          return Concurrency.expiresAt((Concurrency.Leases) ref);
      }
    }

    @Override
    public boolean expiredWord(long word, long now) {
      return Gcra.expiresAt(word) <= now;
    }

    @Override
    public boolean expiredRef(Object ref, long now) {
      return expiresAt(ref) <= now;
    }
  }

  /** One version of a policy bound to its table, with its GCRA constants computed once. */
  private static final class Binding {
    final QuotaPolicy policy;
    final Table table;
    final long quota;
    final long interval;
    final long tolerance;

    Binding(QuotaPolicy policy, Table table) {
      this.policy = policy;
      this.table = table;
      this.quota = policy.quota();
      this.interval = Gcra.emissionInterval(policy);
      this.tolerance = Gcra.tolerance(policy);
    }
  }

  private Binding binding(QuotaPolicy policy) {
    Binding b = bindings.get(policy);
    if (b != null) {
      return b;
    }
    String id = policy.name() + '\u0000' + policy.algorithm().token();
    Table t = tablesByName.computeIfAbsent(id, k -> {
      Table created = new Table(policy);
      tables.add(created);
      return created;
    });
    t.policy = policy;
    if (bindings.size() > 10_000) {
      bindings.clear(); // policies come from configuration; never let stale versions pile up
    }
    b = new Binding(policy, t);
    bindings.put(policy, b);
    return b;
  }

  // ---------------------------------------------------------------- keys

  /** Adds {@code key} to the table unless present, within the bound on tracked keys. */
  private void add(Table t, String key, int hash) {
    reserve();
    boolean added;
    try {
      added = t.partitions.insert(key, hash, EMPTY_TAT, t.initialRef());
    } catch (RuntimeException | Error e) {
      size.decrementAndGet();
      throw e;
    }
    if (!added) {
      size.decrementAndGet(); // another thread added it
      return;
    }
    if (insertions.incrementAndGet() % SWEEP_INTERVAL == 0 && evictor.tryLock()) {
      try {
        sweep(SWEEP_SLICE, false);
      } finally {
        evictor.unlock();
      }
    }
  }

  /** Takes one place in {@link #size}, evicting first when the store is full. */
  private void reserve() {
    for (;;) {
      long n = size.get();
      if (n < maxKeys) {
        if (size.compareAndSet(n, n + 1)) {
          return;
        }
      } else if (makeRoom() == 0) {
        Thread.onSpinWait(); // only places reserved by inserts in flight: they end soon
      }
    }
  }

  private int makeRoom() {
    evictor.lock();
    try {
      int removed = 0;
      while (size.get() >= maxKeys) {
        int r = sweep(EVICTION_SAMPLE, true);
        if (r == 0) {
          break;
        }
        removed += r;
      }
      return removed;
    } finally {
      evictor.unlock();
    }
  }

  /**
   * Looks at up to {@code budget} keys from the rotating cursor, removes the expired ones, and
   * when {@code forceOne} and none expired, the live one closest to expiry. Returns keys removed.
   * Holds {@link #evictor}.
   */
  private int sweep(int budget, boolean forceOne) {
    int tableCount = tables.size();
    if (tableCount == 0) {
      return 0;
    }
    long now = ticker.read();
    int removed = 0;
    int seen = 0;
    int scanned = 0;
    int scanLimit = budget * SWEEP_SCAN_FACTOR;
    int tablesDone = 0;
    Table victimTable = null;
    PartitionTable.Slots victimSlots = null;
    int victimSlot = -1;
    long victimExpiry = Long.MAX_VALUE;
    while (seen < budget && scanned < scanLimit && tablesDone <= tableCount) {
      if (cursorTable >= tableCount) {
        cursorTable = 0;
      }
      Table t = tables.get(cursorTable);
      PartitionTable pt = t.partitions;
      pt.lock.lock();
      int capacity;
      try {
        PartitionTable.Slots s = pt.slots();
        capacity = s.capacity();
        while (seen < budget && scanned < scanLimit && cursorSlot < capacity) {
          int i = cursorSlot++;
          scanned++;
          Object k = s.key(i);
          if (k == null || k == PartitionTable.TOMBSTONE) {
            continue;
          }
          seen++;
          if (pt.evict(s, i, now, t, false)) {
            size.decrementAndGet();
            removed++;
          } else if (forceOne) {
            long expiry = pt.words ? Gcra.expiresAt(s.word(i)) : t.expiresAt(s.ref(i));
            if (expiry < victimExpiry) {
              victimExpiry = expiry;
              victimTable = t;
              victimSlots = s;
              victimSlot = i;
            }
          }
        }
      } finally {
        pt.lock.unlock();
      }
      if (cursorSlot >= capacity) {
        cursorSlot = 0;
        cursorTable++;
        tablesDone++;
      }
    }
    if (forceOne && removed == 0 && victimTable != null) {
      PartitionTable pt = victimTable.partitions;
      pt.lock.lock();
      try {
        if (pt.slots() == victimSlots && pt.evict(victimSlots, victimSlot, now, victimTable, true)) {
          size.decrementAndGet();
          evictedLive.incrementAndGet();
          removed++;
        }
      } finally {
        pt.lock.unlock();
      }
    }
    return removed;
  }

  // ---------------------------------------------------------------- decisions

  /**
   * Decides one policy for one key and says only whether it allowed: the allocation-free path of
   * {@link dev.headroom.RateLimiter#tryAcquire}. Exactly the decision {@link #acquire} makes.
   *
   * @throws IllegalArgumentException for a concurrency policy (a lease must be handed back)
   */
  public boolean tryAcquire(QuotaPolicy policy, PartitionKey key, long cost) {
    if (policy.algorithm() == Algorithm.CONCURRENCY) {
      throw new IllegalArgumentException("policy '" + policy.name()
          + "': tryAcquire cannot hand back a concurrency lease; expected acquire(...) for "
          + Algorithm.CONCURRENCY.token() + " policies");
    }
    Binding b = binding(policy);
    String k = key.value();
    int h = key.hashCode(); // cached in the key and equal to the string's: no visit to the string
    long now = ticker.read();
    if (b.table.partitions.words) {
      return tryAcquireTat(b, k, h, now, cost);
    }
    return commit(b, k, h, now, cost, 0).allowed;
  }

  private boolean tryAcquireTat(Binding b, String key, int hash, long now, long cost) {
    PartitionTable pt = b.table.partitions;
    for (;;) {
      PartitionTable.Slots s = pt.slots();
      int i = s.find(key, hash);
      if (i < 0) {
        add(b.table, key, hash);
        continue;
      }
      for (;;) {
        long tat = s.word(i);
        if (tat == PartitionTable.RETIRED_WORD || tat == PartitionTable.MOVED_WORD) {
          pt.awaitStructure();
          break; // evicted or moved: look the key up again
        }
        long next = cost > b.quota ? Long.MIN_VALUE : Gcra.tryAcquire(tat, now, cost, b.interval, b.tolerance);
        if (next == Long.MIN_VALUE) {
          return false;
        }
        if (next == tat || s.casWord(i, tat, next)) {
          return true;
        }
      }
    }
  }

  /** Decides every acquisition at once, all or nothing. */
  public Decision acquire(List<Acquisition> acquisitions) {
    int n = acquisitions.size();
    if (n == 0) {
      throw new IllegalArgumentException("acquisitions: expected at least one, got none");
    }
    long now = ticker.read();
    if (n == 1) {
      Acquisition a = acquisitions.get(0);
      long leaseId = leaseIdFor(a);
      return Decision.of(List.of(outcome(a, commit(a, now, leaseId), leaseId)));
    }
    Evaluation[] peeks = new Evaluation[n];
    boolean all = true;
    for (int i = 0; i < n; i++) {
      Acquisition a = acquisitions.get(i);
      peeks[i] = peek(a, now, a.cost());
      all &= peeks[i].allowed;
    }
    if (!all) {
      return refusedDecision(acquisitions, peeks, -1, null, now);
    }
    List<PolicyOutcome> outcomes = new ArrayList<>(n);
    long[] leases = new long[n];
    for (int i = 0; i < n; i++) {
      Acquisition a = acquisitions.get(i);
      leases[i] = leaseIdFor(a);
      Evaluation e = commit(a, now, leases[i]);
      if (!e.allowed) {
        for (int j = 0; j < i; j++) {
          undo(acquisitions.get(j), now, leases[j]);
        }
        return refusedDecision(acquisitions, peeks, i, e, now);
      }
      outcomes.add(outcome(a, e, leases[i]));
    }
    return Decision.of(outcomes);
  }

  /**
   * A refused decision: violated policies report their refusal; the others report their state
   * before the request (a cost-0 evaluation), since nothing was consumed.
   */
  private Decision refusedDecision(List<Acquisition> acquisitions, Evaluation[] peeks, int failedAt,
      Evaluation failure, long now) {
    List<PolicyOutcome> outcomes = new ArrayList<>(acquisitions.size());
    for (int i = 0; i < acquisitions.size(); i++) {
      Acquisition a = acquisitions.get(i);
      Evaluation e = i == failedAt ? failure : peeks[i];
      if (e.allowed) {
        Evaluation before = peek(a, now, 0);
        e = new Evaluation(true, null, before.remaining, before.resetNanos, 0);
      }
      outcomes.add(outcome(a, e, 0));
    }
    return Decision.of(outcomes);
  }

  private long leaseIdFor(Acquisition a) {
    return a.policy().algorithm() == Algorithm.CONCURRENCY ? leaseIds.incrementAndGet() : 0;
  }

  /** Evaluates without changing anything; an absent key is evaluated as new, and not added. */
  private Evaluation peek(Acquisition a, long now, long cost) {
    Binding b = binding(a.policy());
    PartitionTable pt = b.table.partitions;
    String key = a.key().value();
    int hash = a.key().hashCode();
    for (;;) {
      PartitionTable.Slots s = pt.slots();
      int i = s.find(key, hash);
      if (pt.words) {
        long tat = i < 0 ? EMPTY_TAT : s.word(i);
        if (tat != PartitionTable.RETIRED_WORD && tat != PartitionTable.MOVED_WORD) {
          return evaluateTat(b, tat, now, cost);
        }
      } else {
        Object state = i < 0 ? b.table.initialRef() : s.ref(i);
        if (state != PartitionTable.RETIRED && state != PartitionTable.MOVED) {
          return evaluateRef(b, state, now, cost, 0);
        }
      }
      pt.awaitStructure();
    }
  }

  private Evaluation commit(Acquisition a, long now, long leaseId) {
    return commit(binding(a.policy()), a.key().value(), a.key().hashCode(), now, a.cost(), leaseId);
  }

  private Evaluation commit(Binding b, String key, int hash, long now, long cost, long leaseId) {
    PartitionTable pt = b.table.partitions;
    for (;;) {
      PartitionTable.Slots s = pt.slots();
      int i = s.find(key, hash);
      if (i < 0) {
        add(b.table, key, hash);
        continue;
      }
      if (pt.words) {
        for (;;) {
          long tat = s.word(i);
          if (tat == PartitionTable.RETIRED_WORD || tat == PartitionTable.MOVED_WORD) {
            break;
          }
          long next = cost > b.quota ? Long.MIN_VALUE : Gcra.tryAcquire(tat, now, cost, b.interval, b.tolerance);
          if (next == Long.MIN_VALUE) {
            return evaluateTat(b, tat, now, cost);
          }
          if (next == tat || s.casWord(i, tat, next)) {
            return allowedTat(b, next, now);
          }
        }
      } else {
        for (;;) {
          Object state = s.ref(i);
          if (state == PartitionTable.RETIRED || state == PartitionTable.MOVED) {
            break;
          }
          Evaluation e = evaluateRef(b, state, now, cost, leaseId);
          if (!e.allowed || e.state == state || s.casRef(i, state, e.state)) {
            return e;
          }
        }
      }
      pt.awaitStructure(); // evicted or moved: look the key up again
    }
  }

  private static Evaluation allowedTat(Binding b, long next, long now) {
    return new Evaluation(true, null, Gcra.remaining(next, now, b.quota, b.interval, b.tolerance),
        Gcra.resetNanos(next, now), 0);
  }

  private static Evaluation evaluateTat(Binding b, long tat, long now, long cost) {
    long next = cost > b.quota ? Long.MIN_VALUE : Gcra.tryAcquire(tat, now, cost, b.interval, b.tolerance);
    if (next != Long.MIN_VALUE) {
      return allowedTat(b, next, now);
    }
    long retry = cost > b.quota ? b.policy.window().toNanos()
        : Gcra.retryAfterNanos(tat, now, cost, b.interval, b.tolerance);
    return new Evaluation(false, null, Gcra.remaining(tat, now, b.quota, b.interval, b.tolerance),
        Gcra.resetNanos(tat, now), retry);
  }

  private static Evaluation evaluateRef(Binding b, Object state, long now, long cost, long leaseId) {
    switch (b.table.algorithm) {
      case FIXED_WINDOW:
        return FixedWindow.evaluate(b.policy, (WindowState) state, now, cost);
      case SLIDING_WINDOW:
        return SlidingWindow.evaluate(b.policy, (WindowState) state, now, cost);
      default:
        return Concurrency.evaluate(b.policy, (Concurrency.Leases) state, now, cost, leaseId);
    }
  }

  private void undo(Acquisition a, long now, long leaseId) {
    if (a.policy().algorithm() == Algorithm.CONCURRENCY) {
      release(a.policy(), a.key(), leaseId, now);
    } else {
      refund(a, now);
    }
  }

  private static PolicyOutcome outcome(Acquisition a, Evaluation e, long leaseId) {
    Lease lease = e.allowed && leaseId != 0 && a.cost() > 0 ? new Lease(a.policy(), a.key(), leaseId, a.cost()) : null;
    return new PolicyOutcome(a.policy(), a.key(), a.cost(), e.allowed, e.remaining, e.resetNanos,
        e.retryAfterNanos, lease);
  }

  // ---------------------------------------------------------------- after the fact

  /** Charges units unconditionally. A concurrency quota is held, not spent: nothing to charge. */
  public void charge(Acquisition a) {
    Binding b = binding(a.policy());
    if (b.table.algorithm == Algorithm.CONCURRENCY) {
      return;
    }
    long now = ticker.read();
    long cost = a.cost();
    update(b, a.key().value(), now, true, (state) -> b.table.algorithm == Algorithm.FIXED_WINDOW
        ? FixedWindow.charge(b.policy, (WindowState) state, now, cost)
        : SlidingWindow.charge(b.policy, (WindowState) state, now, cost),
        tat -> Gcra.charge(tat, now, cost, b.interval));
  }

  /** Gives units back; a key not tracked has nothing to give back. */
  public void refund(Acquisition a) {
    refund(a, ticker.read());
  }

  private void refund(Acquisition a, long now) {
    Binding b = binding(a.policy());
    if (b.table.algorithm == Algorithm.CONCURRENCY) {
      return;
    }
    long cost = a.cost();
    update(b, a.key().value(), now, false, (state) -> b.table.algorithm == Algorithm.FIXED_WINDOW
        ? FixedWindow.refund(b.policy, (WindowState) state, now, cost)
        : SlidingWindow.refund(b.policy, (WindowState) state, now, cost),
        tat -> Gcra.refund(tat, now, cost, b.interval));
  }

  /** Gives back a lease. */
  public void release(Lease lease) {
    release(lease.policy(), lease.key(), lease.id(), ticker.read());
  }

  private void release(QuotaPolicy policy, PartitionKey key, long id, long now) {
    Binding b = binding(policy);
    if (b.table.algorithm != Algorithm.CONCURRENCY) {
      return;
    }
    update(b, key.value(), now, false, state -> ((Concurrency.Leases) state).without(id).prune(now), null);
  }

  /**
   * Applies a side-effect-free state function to a key by CAS; adds the key first when
   * {@code addIfAbsent}, else does nothing for an absent key.
   */
  private void update(Binding b, String key, long now, boolean addIfAbsent,
      java.util.function.UnaryOperator<Object> refFunction, java.util.function.LongUnaryOperator wordFunction) {
    int hash = key.hashCode();
    PartitionTable pt = b.table.partitions;
    for (;;) {
      PartitionTable.Slots s = pt.slots();
      int i = s.find(key, hash);
      if (i < 0) {
        if (!addIfAbsent) {
          return;
        }
        add(b.table, key, hash);
        continue;
      }
      if (pt.words) {
        for (;;) {
          long tat = s.word(i);
          if (tat == PartitionTable.RETIRED_WORD || tat == PartitionTable.MOVED_WORD) {
            break;
          }
          long next = wordFunction.applyAsLong(tat);
          if (next == tat || s.casWord(i, tat, next)) {
            return;
          }
        }
      } else {
        for (;;) {
          Object state = s.ref(i);
          if (state == PartitionTable.RETIRED || state == PartitionTable.MOVED) {
            break;
          }
          Object next = refFunction.apply(state);
          if (next == state || s.casRef(i, state, next)) {
            return;
          }
        }
      }
      pt.awaitStructure(); // evicted or moved: look the key up again
    }
  }

  /** Keys currently tracked (policy and partition pairs). */
  public long size() {
    return size.get();
  }

  /** Live (not yet expired) keys evicted because the store was full, since creation. */
  public long evictedLive() {
    return evictedLive.get();
  }
}
