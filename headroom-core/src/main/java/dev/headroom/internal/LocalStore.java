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
import java.util.function.LongUnaryOperator;
import java.util.function.UnaryOperator;

/**
 * The engine of {@link dev.headroom.InMemoryStore}.
 *
 * <h2>Layout</h2>
 * One {@link PolicyPartitions} per policy name and algorithm (a changed policy with the same name and
 * algorithm keeps its counters, so a configuration reload resets nothing), each holding a
 * {@link PartitionTable}: an open-addressing table of the partition keys' strings and one state per
 * key, a {@code long} (the GCRA theoretical arrival time) for token buckets, an immutable
 * {@link WindowState} or {@link Concurrency.Leases} for the others. Decisions on tracked keys are
 * lock-free: one probe and one CAS per policy; a token-bucket decision allocates nothing on the
 * {@link #tryAcquire} path, and a fixed-window one allocates only the new state when it admits.
 * A policy instance finds its table through a small direct-mapped cache checked by identity
 * ({@link #RECENT_BINDINGS} slots), so a decision does no map lookup; the map behind it is visited
 * once per policy instance (and again only when two instances in use share a cache slot). The
 * algorithms themselves are the pure functions of {@link Gcra},
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
 * <h2>Bounded memory, and what a flood cannot buy</h2>
 * At most {@code maxKeys} keys are tracked, in the tables. A key whose state is at rest (a full
 * bucket, a past window, no live lease) equals an absent key and costs nothing to forget. What
 * enters a full store, what leaves it, and how a key kept out is decided: {@link KeyAdmission}. In
 * short: at a full store a new key of a rate policy is decided from its table's
 * {@link UseSketch} sketch and enters the table only when it comes back (TinyLFU's doorkeeper,
 * {@link Doorkeeper}); a key that enters evicts keys at rest first, else the least consumed live
 * key of a sample, whose state is folded into the sketch. A key entering a table, or decided
 * from the sketch, starts from what the sketch remembers of it.
 *
 * <p><b>Guarantee:</b> a key refused at its quota never gets fresh quota through memory pressure
 * (eviction and return, or being kept out): it stays refusing until its use expires, for every
 * algorithm (a window's count no smaller, a TAT no earlier, held leases held until they time out),
 * however many keys flood the store. A key that stays in its table keeps its exact state: its
 * quota is exact. Worked numbers, the scenario: {@code maxKeys = 1,000}, a key refused
 * at 50 of 50 in a one-hour fixed window at 12:10, then 10,000 distinct keys of one request each.
 * The first 999 take the store's free places; each of the other 9,001 is decided from the sketch
 * and kept out, so the refused key stays in its table with its exact count (were it ever evicted,
 * as the most consumed it is the last any sample picks, and its 50 units would go into the sketch,
 * where a flood of one-unit keys cannot displace them). It is refused at 12:10, refused at
 * 12:59:59.999, and admitted at 13:00. A key below its quota that is evicted or kept out comes
 * back with its own use when one of its sketch cells still names it; only if all four were taken
 * by keys at least as heavy does it come back at rest (odds in {@link UseSketch}: 5 in 100
 * million for 1,000 such keys at the default bound). The price moves to the other side: a key
 * can come back with a neighbour's larger use (refused early, never admitted extra), and a
 * newcomer whose four cells all hold refused keys starts refused, the collateral of a flood of
 * exhausted keys (chance {@code (r/W)^4}). A refund or a release for a key not in its table gives
 * nothing back (the sketch keeps maxima; the unit stays spent until its use expires).
 */
public final class LocalStore {

  /** The TAT of a key never seen: far in the past, so the bucket is full. */
  static final long EMPTY_TAT = Long.MIN_VALUE + 1;

  private final Ticker ticker;
  /** Slots of {@link #recent} (a power of two). */
  static final int RECENT_BINDINGS = 64;

  private final ConcurrentHashMap<QuotaPolicy, Binding> bindings = new ConcurrentHashMap<>();
  private final Binding[] recent = new Binding[RECENT_BINDINGS];
  private final ConcurrentHashMap<String, PolicyPartitions> tablesByName = new ConcurrentHashMap<>();
  private final CopyOnWriteArrayList<PolicyPartitions> tables = new CopyOnWriteArrayList<>();
  private final KeyAdmission keys;
  private final AtomicLong leaseIds;
  private final int sketchWidth;
  private final long maxKeys;

  public LocalStore(Ticker ticker, long maxKeys) {
    this(ticker, maxKeys, new AtomicLong());
  }

  private LocalStore(Ticker ticker, long maxKeys, AtomicLong leaseIds) {
    this.ticker = ticker;
    this.maxKeys = maxKeys;
    this.leaseIds = leaseIds;
    this.keys = new KeyAdmission(maxKeys, tables);
    this.sketchWidth = UseSketch.widthFor(maxKeys);
  }

  /**
   * An empty store with this one's ticker and bound whose lease ids go on from this one's, so that
   * a lease this one handed out is never taken for one of the new store's.
   */
  public LocalStore successor() {
    return new LocalStore(ticker, maxKeys, leaseIds);
  }

  /**
   * The binding of {@code policy}: first from {@link #recent}, a small direct-mapped cache indexed by
   * the policy's cached hash and checked by identity (one array read and one comparison, no map
   * lookup, on every decision of a policy instance already seen), then from {@link #bindings}.
   */
  private Binding binding(QuotaPolicy policy) {
    int slot = policy.hashCode() & (RECENT_BINDINGS - 1);
    Binding b = recent[slot];
    if (b != null && b.policy == policy) {
      return b;
    }
    return bindingSlow(policy, slot);
  }

  private Binding bindingSlow(QuotaPolicy policy, int slot) {
    Binding b = bindings.get(policy);
    if (b == null) {
      String id = policy.name() + '\u0000' + policy.algorithm().token();
      PolicyPartitions t = tablesByName.computeIfAbsent(id, k -> {
        PolicyPartitions created = new PolicyPartitions(policy, sketchWidth);
        tables.add(created);
        return created;
      });
      t.policy = policy;
      if (bindings.size() > 10_000) {
        bindings.clear(); // policies come from configuration; never let stale versions pile up
      }
      b = new Binding(policy, t);
      bindings.put(policy, b);
    }
    // A racy plain write is safe: a Binding has only final fields (safely published), and a reader
    // that misses it or sees another policy's binding takes this path again.
    recent[slot] = b;
    return b;
  }

  // ---------------------------------------------------------------- decisions

  /**
   * Decides one policy for one key and says only whether it allowed: the allocation-free path of
   * {@link dev.headroom.QuotaLimiter#tryAcquire}. Exactly the decision {@link #acquire} makes.
   *
   * @throws IllegalArgumentException for a concurrency policy (a lease must be handed back)
   */
  public boolean tryAcquire(QuotaPolicy policy, PartitionKey key, long cost) {
    Binding b = binding(policy);
    if (b.words) {
      // cached in the key and equal to the string's: no visit to the string
      return tryAcquireTat(b, key.value(), key.hashCode(), ticker.read(), cost);
    }
    if (b.table.algorithm == Algorithm.CONCURRENCY) {
      throw new IllegalArgumentException("policy '" + policy.name()
          + "': tryAcquire cannot hand back a concurrency lease; expected acquire(...) for "
          + Algorithm.CONCURRENCY.token() + " policies");
    }
    if (b.table.algorithm == Algorithm.FIXED_WINDOW) {
      return tryAcquireWindow(b, key.value(), key.hashCode(), ticker.read(), cost);
    }
    return commit(b, key.value(), key.hashCode(), ticker.read(), cost, 0).allowed;
  }

  /** The fixed-window decision: one probe, one CAS; allocates only the new state when admitted. */
  private boolean tryAcquireWindow(Binding b, String key, int hash, long now, long cost) {
    PartitionTable pt = b.partitions;
    for (;;) {
      PartitionTable.Slots s = pt.slots();
      int i = s.find(key, hash);
      if (i < 0) {
        int absent = keys.tryAbsent(b, key, hash, now, cost);
        if (absent != KeyAdmission.IN_TABLE) {
          return absent == 1; // kept out: decided from the sketch
        }
        continue;
      }
      for (;;) {
        Object state = s.ref(i);
        if (state == PartitionTable.RETIRED || state == PartitionTable.MOVED) {
          pt.awaitStructure();
          break; // evicted or moved: look the key up again
        }
        if (!s.holds(i, key)) {
          break; // the slot was reused: look the key up again
        }
        if (s.ref(i) != state) {
          continue; // see PartitionTable, "Tombstone reuse": the state must be there all along
        }
        WindowState next = FixedWindow.tryAcquire((WindowState) state, now, cost, b.windowNanos, b.quota);
        if (next == null) {
          return false;
        }
        if (s.casRef(i, state, next)) {
          return true;
        }
      }
    }
  }

  /** The token-bucket decision: one lock-free probe, one CAS, no allocation. */
  private boolean tryAcquireTat(Binding b, String key, int hash, long now, long cost) {
    PartitionTable pt = b.partitions;
    for (;;) {
      PartitionTable.Slots s = pt.slots();
      int i = s.find(key, hash);
      if (i < 0) {
        int absent = keys.tryAbsent(b, key, hash, now, cost);
        if (absent != KeyAdmission.IN_TABLE) {
          return absent == 1; // kept out: decided from the sketch
        }
        continue;
      }
      long generation = s.tag(i);
      if (!s.holds(i, key)) {
        continue; // the slot was reused: look the key up again
      }
      for (;;) {
        long tat = s.word(i);
        if (tat == PartitionTable.RETIRED_WORD || tat == PartitionTable.MOVED_WORD) {
          pt.awaitStructure();
          break; // evicted or moved: look the key up again
        }
        if (s.tag(i) != generation) {
          break; // reused since the key was checked: the word may be another key's
        }
        long next = b.tryTat(tat, now, cost);
        if (next == Long.MIN_VALUE) {
          return false;
        }
        if (next == tat) {
          return true;
        }
        if (s.casWord(i, tat, next)) {
          if (s.tag(i) == generation) {
            return true;
          }
          break; // reused around the CAS: count the units spent wherever they landed, decide again
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
        e = new Evaluation(true, null, before.remaining, before.resetNanos, before.nextQuotaNanos, 0);
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
      if (i < 0) {
        return peekAbsent(b, key, now, cost);
      }
      if (pt.words) {
        long generation = s.tag(i);
        long tat = s.word(i);
        if (tat != PartitionTable.RETIRED_WORD && tat != PartitionTable.MOVED_WORD) {
          if (s.holds(i, key) && s.tag(i) == generation) {
            return b.evaluateTat(tat, now, cost);
          }
          continue; // the slot was reused: look the key up again
        }
      } else {
        Object state = s.ref(i);
        if (state != PartitionTable.RETIRED && state != PartitionTable.MOVED) {
          if (s.holds(i, key) && s.ref(i) == state) {
            return b.evaluateRef(state, now, cost, 0);
          }
          continue;
        }
      }
      pt.awaitStructure();
    }
  }

  /** Evaluates a key not tracked from what the sketch remembers of it (under the table's lock). */
  private Evaluation peekAbsent(Binding b, String key, long now, long cost) {
    PolicyPartitions t = b.table;
    t.partitions.lock.lock();
    try {
      long keyHash = t.sketchHash(key);
      return t.partitions.words ? b.evaluateTat(t.startingWord(keyHash, now, EMPTY_TAT), now, cost)
          : b.evaluateRef(t.startingRef(keyHash, now), now, cost, 0);
    } finally {
      t.partitions.lock.unlock();
    }
  }

  private Evaluation commit(Acquisition a, long now, long leaseId) {
    return commit(binding(a.policy()), a.key().value(), a.key().hashCode(), now, a.cost(), leaseId);
  }

  private Evaluation commit(Binding b, String key, int hash, long now, long cost, long leaseId) {
    PartitionTable pt = b.table.partitions;
    outer:
    for (;;) {
      PartitionTable.Slots s = pt.slots();
      int i = s.find(key, hash);
      if (i < 0) {
        Evaluation e = keys.commitAbsent(b, key, hash, now, cost);
        if (e != null) {
          return e; // kept out: decided from the sketch
        }
        continue;
      }
      if (pt.words) {
        long generation = s.tag(i);
        if (!s.holds(i, key)) {
          continue; // the slot was reused: look the key up again
        }
        for (;;) {
          long tat = s.word(i);
          if (tat == PartitionTable.RETIRED_WORD || tat == PartitionTable.MOVED_WORD) {
            break;
          }
          if (s.tag(i) != generation) {
            continue outer;
          }
          long next = b.tryTat(tat, now, cost);
          if (next == Long.MIN_VALUE) {
            return b.evaluateTat(tat, now, cost);
          }
          if (next == tat) {
            return b.allowedTat(next, now);
          }
          if (s.casWord(i, tat, next)) {
            if (s.tag(i) == generation) {
              return b.allowedTat(next, now);
            }
            continue outer; // reused around the CAS: units spent wherever they landed, decide again
          }
        }
      } else {
        for (;;) {
          Object state = s.ref(i);
          if (state == PartitionTable.RETIRED || state == PartitionTable.MOVED) {
            break;
          }
          if (!s.holds(i, key)) {
            continue outer;
          }
          if (s.ref(i) != state) {
            continue;
          }
          Evaluation e = b.evaluateRef(state, now, cost, leaseId);
          if (!e.allowed || e.state == state || s.casRef(i, state, e.state)) {
            return e;
          }
        }
      }
      pt.awaitStructure(); // evicted or moved: look the key up again
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
        e.nextQuotaNanos, e.retryAfterNanos, lease);
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
      UnaryOperator<Object> refFunction, LongUnaryOperator wordFunction) {
    int hash = key.hashCode();
    PartitionTable pt = b.table.partitions;
    // A refund of a token bucket holds the lock: no slot is reused meanwhile, so the units given
    // back cannot land on a key that took the slot (which would admit extra; a charge landing there
    // only refuses early, and is made again on the right key).
    boolean locked = pt.words && !addIfAbsent;
    if (locked) {
      pt.lock.lock();
    }
    try {
      updateLoop(b, key, hash, now, addIfAbsent, refFunction, wordFunction);
    } finally {
      if (locked) {
        pt.lock.unlock();
      }
    }
  }

  private void updateLoop(Binding b, String key, int hash, long now, boolean addIfAbsent,
      UnaryOperator<Object> refFunction, LongUnaryOperator wordFunction) {
    PartitionTable pt = b.table.partitions;
    outer:
    for (;;) {
      PartitionTable.Slots s = pt.slots();
      int i = s.find(key, hash);
      if (i < 0) {
        if (!addIfAbsent) {
          return;
        }
        if (keys.updateAbsent(b, key, hash, now, refFunction, wordFunction)) {
          return; // kept out: changed in the sketch
        }
        continue;
      }
      if (pt.words) {
        long generation = s.tag(i);
        if (!s.holds(i, key)) {
          continue;
        }
        for (;;) {
          long tat = s.word(i);
          if (tat == PartitionTable.RETIRED_WORD || tat == PartitionTable.MOVED_WORD) {
            break;
          }
          if (s.tag(i) != generation) {
            continue outer;
          }
          long next = wordFunction.applyAsLong(tat);
          if (next == tat) {
            return;
          }
          if (s.casWord(i, tat, next)) {
            if (s.tag(i) == generation) {
              return;
            }
            continue outer; // a charge (refunds hold the lock) that may have gone astray: charge again
          }
        }
      } else {
        for (;;) {
          Object state = s.ref(i);
          if (state == PartitionTable.RETIRED || state == PartitionTable.MOVED) {
            break;
          }
          if (!s.holds(i, key)) {
            continue outer;
          }
          if (s.ref(i) != state) {
            continue;
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

  /** Keys in the tables now (policy and partition pairs), each with its exact state; a key kept out is not. */
  public long size() {
    return keys.size.get();
  }

  /**
   * Live keys evicted from a table to make room for a key that entered a full store, since
   * creation; each was folded into a sketch.
   */
  public long evictedLive() {
    return keys.evictedLive.sum();
  }

  /** Keys at rest (equal to absent keys) removed to make room or by a sweep, since creation. */
  public long evictedResting() {
    return keys.evictedResting.sum();
  }

  /** Keys that entered a table with the use the sketch remembered of them, since creation. */
  public long restored() {
    return keys.restored.sum();
  }

  /**
   * Decisions (and charges) on keys a full store kept out of its tables, made from the sketch and
   * folded back into it, since creation: one per call of a one-request key at a full store.
   */
  public long sketchDecisions() {
    return keys.untracked.sum();
  }

  /**
   * Probe lengths over every table's keys: {@code {longest, total, keys}} (see
   * {@link PartitionTable.Slots#probeLengths}). For tests and diagnostics.
   */
  long[] probeLengths() {
    long[] all = new long[3];
    for (PolicyPartitions t : tables) {
      long[] p = t.partitions.slots().probeLengths();
      all[0] = Math.max(all[0], p[0]);
      all[1] += p[1];
      all[2] += p[2];
    }
    return all;
  }
}
