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
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The engine of {@link dev.headroom.InMemoryStore}.
 *
 * <h2>Layout</h2>
 * One {@link Table} per policy name and algorithm (a changed policy with the same name and
 * algorithm keeps its counters, so a configuration reload resets nothing), each a
 * {@link ConcurrentHashMap} from {@link PartitionKey} to a {@link Cell}. Decisions on tracked keys
 * are lock-free: one map lookup and one CAS per policy.
 *
 * <h2>All or nothing</h2>
 * A request with one policy is one CAS loop. A request with several is decided in two phases:
 * every policy is first evaluated without writing; if any refuses, nothing was written. Otherwise
 * each is committed in turn, and if a concurrent request took the last unit in between, the
 * commits already made are refunded. The refusal is then exact, and the refunded units were held
 * only for that instant.
 *
 * <h2>Bounded memory</h2>
 * At most {@code maxKeys} cells exist. A key whose state has expired (a full bucket, a past window,
 * no live lease) equals an absent key and is removed whenever the evictor passes it. The evictor
 * runs when a new key arrives at a full store, and for a small slice every
 * {@link #SWEEP_INTERVAL} new keys. When the store is full of live keys, the new key evicts the
 * live key closest to expiry among {@link #EVICTION_SAMPLE} sampled ones: that partition forgets
 * its count (it may be admitted up to one quota more than the policy allows), which is the
 * documented price of a flood of distinct keys; memory stays bounded and no request waits.
 * Admitting a new key to a full store takes the evictor's lock; decisions on tracked keys never do.
 * Expiry is judged on the sample: when every cell of a sample is live, one of them is evicted even
 * if expired cells remain elsewhere, so a few live evictions can happen before the store is truly
 * full of live keys; each one is counted. A new key reserves its slot before it enters a map, so
 * inserts racing at a full store never take the count above {@code maxKeys}.
 */
public final class LocalStore {

  /** How many cells the evictor looks at to choose a live victim when the store is full. */
  static final int EVICTION_SAMPLE = 16;

  /** Every this many new keys, the evictor sweeps a slice of the store for expired keys. */
  static final int SWEEP_INTERVAL = 1024;

  /** How many cells one periodic sweep looks at. */
  static final int SWEEP_SLICE = 256;

  private final Ticker ticker;
  private final long maxKeys;
  private final ConcurrentHashMap<QuotaPolicy, Table> tablesByPolicy = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Table> tablesByName = new ConcurrentHashMap<>();
  private final CopyOnWriteArrayList<Table> tables = new CopyOnWriteArrayList<>();
  private final AtomicLong size = new AtomicLong();
  private final AtomicLong insertions = new AtomicLong();
  private final AtomicLong evictedLive = new AtomicLong();
  private final AtomicLong leaseIds = new AtomicLong();
  private final ReentrantLock evictor = new ReentrantLock();
  private int cursorTable;
  private Iterator<Map.Entry<PartitionKey, Cell>> cursor;

  public LocalStore(Ticker ticker, long maxKeys) {
    this.ticker = ticker;
    this.maxKeys = maxKeys;
  }

  /** The cells of one policy name and algorithm. */
  private static final class Table {
    final Algorithm algorithm;
    volatile QuotaPolicy policy;
    final ConcurrentHashMap<PartitionKey, Cell> cells = new ConcurrentHashMap<>();

    Table(QuotaPolicy policy) {
      this.algorithm = policy.algorithm();
      this.policy = policy;
    }

    Cell newCell() {
      switch (algorithm) {
        case TOKEN_BUCKET:
          return new GcraCell();
        case CONCURRENCY:
          return new LeaseCell();
        default:
          return new WindowCell(algorithm);
      }
    }
  }

  private Table table(QuotaPolicy policy) {
    Table t = tablesByPolicy.get(policy);
    if (t != null) {
      return t;
    }
    String id = policy.name() + '\u0000' + policy.algorithm().token();
    t = tablesByName.computeIfAbsent(id, k -> {
      Table created = new Table(policy);
      tables.add(created);
      return created;
    });
    t.policy = policy;
    if (tablesByPolicy.size() > 10_000) {
      tablesByPolicy.clear(); // policies come from configuration; never let stale versions pile up
    }
    tablesByPolicy.put(policy, t);
    return t;
  }

  private Cell cell(Table t, PartitionKey key) {
    Cell c = t.cells.get(key);
    if (c != null) {
      return c;
    }
    return insert(t, key);
  }

  private Cell insert(Table t, PartitionKey key) {
    reserveSlot();
    Cell fresh = t.newCell();
    Cell existing = t.cells.putIfAbsent(key, fresh);
    if (existing != null) {
      size.decrementAndGet();
      return existing;
    }
    if (insertions.incrementAndGet() % SWEEP_INTERVAL == 0 && evictor.tryLock()) {
      try {
        sweep(SWEEP_SLICE, false);
      } finally {
        evictor.unlock();
      }
    }
    return fresh;
  }

  /**
   * Counts a new cell before it is in a map, so that inserts racing at a full store cannot pass
   * the bound together (each takes a slot by CAS, or makes room first).
   */
  private void reserveSlot() {
    for (;;) {
      long current = size.get();
      if (current < maxKeys) {
        if (size.compareAndSet(current, current + 1)) {
          return;
        }
      } else {
        makeRoom();
        if (size.get() >= maxKeys) {
          Thread.onSpinWait(); // every slot is reserved by an insert still in flight
        }
      }
    }
  }

  /** Removes a cell the evictor retired; the size counts each removal exactly once. */
  private void forget(Table t, PartitionKey key, Cell retired) {
    if (t.cells.remove(key, retired)) {
      size.decrementAndGet();
    }
  }

  private void makeRoom() {
    evictor.lock();
    try {
      while (size.get() >= maxKeys) {
        if (sweep(EVICTION_SAMPLE, true) == 0 && size.get() >= maxKeys) {
          // Every slot is reserved by an insert not yet in a map: the caller waits for it.
          return;
        }
      }
    } finally {
      evictor.unlock();
    }
  }

  /**
   * Looks at up to {@code budget} cells from the rotating cursor, removes the expired ones, and
   * when {@code forceOne} and none expired, the live one closest to expiry. Returns cells removed.
   * Holds {@link #evictor}.
   */
  private int sweep(int budget, boolean forceOne) {
    long now = ticker.read();
    int removed = 0;
    Table victimTable = null;
    PartitionKey victimKey = null;
    Cell victim = null;
    long victimExpiry = Long.MAX_VALUE;
    int emptyTables = 0;
    for (int seen = 0; seen < budget; ) {
      if (tables.isEmpty()) {
        return removed;
      }
      if (cursor == null || !cursor.hasNext()) {
        cursorTable = (cursorTable + 1) % tables.size();
        cursor = tables.get(cursorTable).cells.entrySet().iterator();
        if (!cursor.hasNext()) {
          if (++emptyTables > tables.size()) {
            break;
          }
          continue;
        }
      }
      Table t = tables.get(cursorTable);
      Map.Entry<PartitionKey, Cell> e = cursor.next();
      seen++;
      Cell c = e.getValue();
      QuotaPolicy p = t.policy;
      if (c.retire(p, now, false)) {
        if (t.cells.remove(e.getKey(), c)) {
          size.decrementAndGet();
          removed++;
        }
      } else if (forceOne) {
        long expiry = c.expiresAt(p);
        if (expiry < victimExpiry) {
          victimExpiry = expiry;
          victimTable = t;
          victimKey = e.getKey();
          victim = c;
        }
      }
    }
    if (forceOne && removed == 0 && victim != null) {
      victim.retire(victimTable.policy, now, true);
      if (victimTable.cells.remove(victimKey, victim)) {
        size.decrementAndGet();
        evictedLive.incrementAndGet();
        removed++;
      }
    }
    return removed;
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
      peeks[i] = cell(table(a.policy()), a.key()).peek(a.policy(), now, a.cost());
      all &= peeks[i].allowed;
    }
    List<PolicyOutcome> outcomes = new ArrayList<>(n);
    if (!all) {
      return refusedDecision(acquisitions, peeks, -1, null, now);
    }
    long[] leaseIds = new long[n];
    for (int i = 0; i < n; i++) {
      Acquisition a = acquisitions.get(i);
      leaseIds[i] = leaseIdFor(a);
      Evaluation e = commit(a, now, leaseIds[i]);
      if (!e.allowed) {
        for (int j = 0; j < i; j++) {
          undo(acquisitions.get(j), now, leaseIds[j]);
        }
        return refusedDecision(acquisitions, peeks, i, e, now);
      }
      outcomes.add(outcome(a, e, leaseIds[i]));
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
        Evaluation before = cell(table(a.policy()), a.key()).peek(a.policy(), now, 0);
        e = new Evaluation(true, null, before.remaining, before.resetNanos, 0);
      }
      outcomes.add(outcome(a, e, 0));
    }
    return Decision.of(outcomes);
  }

  private long leaseIdFor(Acquisition a) {
    return a.policy().algorithm() == Algorithm.CONCURRENCY ? leaseIds.incrementAndGet() : 0;
  }

  private Evaluation commit(Acquisition a, long now, long leaseId) {
    Table t = table(a.policy());
    for (;;) {
      Cell c = cell(t, a.key());
      Evaluation e = c.commit(a.policy(), now, a.cost(), leaseId);
      if (e != null) {
        return e;
      }
      forget(t, a.key(), c); // retired by the evictor: look again
    }
  }

  private void undo(Acquisition a, long now, long leaseId) {
    if (a.policy().algorithm() == Algorithm.CONCURRENCY) {
      release(a.policy(), a.key(), leaseId);
    } else {
      refund(a, now); // at the decision's instant: the exact inverse of its commit
    }
  }

  private static PolicyOutcome outcome(Acquisition a, Evaluation e, long leaseId) {
    Lease lease = e.allowed && leaseId != 0 && a.cost() > 0 ? new Lease(a.policy(), a.key(), leaseId, a.cost()) : null;
    return new PolicyOutcome(a.policy(), a.key(), a.cost(), e.allowed, e.remaining, e.resetNanos,
        e.retryAfterNanos, lease);
  }

  /** Charges units unconditionally. */
  public void charge(Acquisition a) {
    long now = ticker.read();
    Table t = table(a.policy());
    for (;;) {
      Cell c = cell(t, a.key());
      if (c.charge(a.policy(), now, a.cost())) {
        return;
      }
      forget(t, a.key(), c);
    }
  }

  /** Gives units back; a key not tracked has nothing to give back. */
  public void refund(Acquisition a) {
    refund(a, ticker.read());
  }

  private void refund(Acquisition a, long now) {
    Table t = table(a.policy());
    for (;;) {
      Cell c = t.cells.get(a.key());
      if (c == null || c.refund(a.policy(), now, a.cost())) {
        return;
      }
      forget(t, a.key(), c);
    }
  }

  /** Gives back a lease. */
  public void release(Lease lease) {
    release(lease.policy(), lease.key(), lease.id());
  }

  private void release(QuotaPolicy policy, PartitionKey key, long id) {
    Cell c = table(policy).cells.get(key);
    if (c != null) {
      c.release(id, ticker.read());
    }
  }

  /** Cells currently tracked. */
  public long size() {
    return size.get();
  }

  /** Live (not yet expired) keys evicted because the store was full, since creation. */
  public long evictedLive() {
    return evictedLive.get();
  }
}
