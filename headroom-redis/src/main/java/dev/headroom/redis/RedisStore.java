package dev.headroom.redis;

import dev.headroom.Acquisition;
import dev.headroom.Decision;
import dev.headroom.InMemoryStore;
import dev.headroom.Lease;
import dev.headroom.PolicyOutcome;
import dev.headroom.Store;
import dev.headroom.StoreException;
import dev.headroom.StoreHealth;
import dev.headroom.Ticker;
import dev.headroom.redis.internal.Coalescer;
import dev.headroom.redis.internal.Deadlines;
import dev.headroom.redis.internal.DecisionCalls;
import dev.headroom.redis.internal.DecisionScript;
import dev.headroom.redis.internal.Endpoint;
import dev.headroom.redis.internal.KeyLayout;
import dev.headroom.redis.internal.RefusalMemory;
import dev.headroom.redis.internal.ReplicaAcknowledgement;
import dev.headroom.redis.internal.SlotShare;
import dev.headroom.redis.internal.WriteStamp;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.resource.ClientResources;
import io.netty.util.HashedWheelTimer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The distributed {@link Store}: quota state in Redis or Redis Cluster, shared by every process
 * that points at it.
 *
 * <h2>How is this designed, and why?</h2>
 * Every decision of a request, all of its policies, is one round trip: one {@code FCALL} of a Lua
 * function library (loaded with {@code FUNCTION LOAD} when Redis answers that it has none; before
 * Redis 7, {@code EVALSHA} of the same code as a script) that evaluates every policy first and
 * commits all of them only when all allow, as {@link InMemoryStore} does. The
 * script implements the algorithms of {@code dev.headroom.internal} ({@code Gcra},
 * {@code FixedWindow}, {@code SlidingWindow}, {@code Concurrency}) to the nanosecond and the unit:
 * the same allowed flags, {@code r}, {@code t}, Retry-After, debt, refunds and leases, which a
 * differential test checks against the in-memory store on random request sequences.
 *
 * <p><b>Coalescing.</b> Decisions of one process on the same keys (blocking or asynchronous, as
 * the gateway's) that arrive while a call on those keys is in flight are sent together, as one
 * {@code FCALL} in batch mode, when its reply arrives ({@link Coalescer}): Redis decides them one
 * after another, each exactly as alone, and each caller gets its own reply; equal requests are
 * evaluated only until the first refusal, which the rest would repeat. A lone caller is sent at
 * once; nothing waits on a timer.
 *
 * <p><b>Refusals remembered</b> ({@link RefusalMemory}): a request equal to one Redis refused,
 * made while that refusal's Retry-After runs, is refused without a round trip (Redis's state only
 * moves toward refusal between them, give-backs aside), for at most
 * {@link Builder#refusalMemory}; a give-back through this store forgets every remembered refusal.
 *
 * <p><b>Time</b> is Redis {@code TIME}, read inside the script, so that gateway nodes whose clocks
 * disagree still agree on every window. Only when the builder is given a {@link Ticker} (a test
 * mode for {@link dev.headroom.ManualTicker}) does the script take the caller's time instead.
 *
 * <p><b>Exact integers in Lua</b> (doubles, exact below 2^53): times and durations travel as
 * (seconds, nanoseconds) pairs; see {@link DecisionScript}.
 *
 * <p><b>Keys</b> ({@link KeyLayout}): {@code prefix + policy + ":" + algorithm + ":{partition}"}, the
 * partition being the Cluster hash tag. Each write sets the key to expire when its state becomes
 * equal to an absent key's (a full bucket, a past window, no live lease), so memory is bounded by
 * the partitions active within their windows.
 *
 * <p><b>Redis Cluster.</b> Policies of one partition share a slot and are decided by one script; a
 * request whose policies fall in several slots is decided by reservation and refund
 * ({@link SlotShare}): it is never admitted beyond a quota.
 *
 * <p><b>Failures</b> follow the {@link FailurePolicy}. A decision that Redis does not answer within
 * the decision deadline, counted from the moment its command is written to the connection, is
 * decided by that policy; the wait before the write is this process's own backlog, bounded by the
 * write timeout and by admission control, and refused as {@link StoreOverloadedException} whatever
 * the policy ({@link Deadlines}). If Redis applies a decision after it was decided without it, the late reply is
 * seen and whatever it consumed is given back, so a slow Redis does not charge a request twice.
 * Only a reply lost with its connection (Redis applied the script, then the link broke before the
 * answer) can leave one request counted in Redis without being admitted by it.
 *
 * <p><b>Replica acknowledgements</b> ({@link Builder#replicaAcknowledgements}, off by default): each
 * call that may admit is followed by Redis {@code WAIT} on the same connection, and an admission
 * that fewer replicas than asked acknowledged within its timeout is not kept as Redis decided it:
 * fail-closed refuses it ({@link RedisUnavailableException}) and fail-open admits it (as Redis
 * did), while fallback decides it in the local store; the first and the last give the master's
 * admission back. A failover then loses no admission the store kept
 * ({@link ReplicaAcknowledgement}). Lettuce exceptions
 * never escape: {@link #acquire} returns a decision or throws {@link RedisUnavailableException}
 * (fail closed only) or {@link StoreOverloadedException}. {@link #charge}, {@link #refund} and {@link #release} are best effort: they
 * wait at most the deadline, never throw, and with {@link FailurePolicy#FALLBACK} apply to the
 * local store when Redis is away.
 *
 * <pre>{@code
 * RedisStore store = RedisStore.builder()
 *     .uri("redis://127.0.0.1:6379")
 *     .keyPrefix("api:")
 *     .failurePolicy(FailurePolicy.FALLBACK)
 *     .decisionDeadline(Duration.ofMillis(50))
 *     .build();
 * QuotaLimiter limiter = QuotaLimiter.of(store);
 * }</pre>
 *
 * <p>Thread-safe. Callbacks of {@link #acquireAsync} may run on a Lettuce I/O thread: do not block
 * in them.
 */
public final class RedisStore implements Store, StoreHealth.Source {

  /** The default decision deadline: how long a decision may wait for Redis. */
  public static final Duration DEFAULT_DECISION_DEADLINE = Duration.ofMillis(100);

  /** The default write timeout: the longest wait in this store's own queue before the write. */
  public static final Duration DEFAULT_WRITE_TIMEOUT = Duration.ofSeconds(1);

  /** The default bound on decisions awaiting Redis's reply at once (admission control). */
  public static final int DEFAULT_MAX_OUTSTANDING = 10_000;

  /** The default bound on how long a refusal is remembered ({@link Builder#refusalMemory}). */
  public static final Duration DEFAULT_REFUSAL_MEMORY = Duration.ofSeconds(1);

  /**
   * The {@code WAIT} timeout the gateway and the Spring Boot starter give
   * {@link Builder#replicaAcknowledgements} when their configuration names only the replicas.
   */
  public static final Duration DEFAULT_REPLICA_ACKNOWLEDGEMENT_TIMEOUT = Duration.ofMillis(50);

  /** The most replicas {@link Builder#replicaAcknowledgements} may ask to acknowledge an admission. */
  public static final int MAX_ACKNOWLEDGING_REPLICAS = ReplicaAcknowledgement.MAX_REPLICAS;

  /** The default key prefix. */
  public static final String DEFAULT_KEY_PREFIX = "headroom:";

  /**
   * With a test ticker, keys live this much longer than their state: the ticker's time is not
   * the time by which Redis expires keys, and a key must not vanish while the test still needs it.
   */
  static final long TEST_TTL_MARGIN_MILLIS = 3_600_000;

  /** How long Lettuce keeps a command before failing it: long enough to see late replies. */
  static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(10);

  /** The resolution of asynchronous deadlines: a deadline is seen at most this much late. */
  static final long TIMER_TICK_MILLIS = 1;

  /** Slots of the timer wheel: one turn covers half a second at {@link #TIMER_TICK_MILLIS}. */
  static final int TIMER_WHEEL_TICKS = 512;

  private static final Logger LOG = LoggerFactory.getLogger(RedisStore.class);

  private final Endpoint endpoint;
  private final KeyLayout layout;
  private final DecisionCalls calls;
  private final Coalescer coalescer;
  private final RefusalMemory refusals;
  private final FailurePolicy failurePolicy;
  /** With {@link FailurePolicy#FALLBACK}, the local store; else null. */
  private final Fallback fallback;
  /** Times Redis stopped deciding, since creation: a forget planned at a return checks none came since. */
  private final AtomicLong outages = new AtomicLong();
  private final long deadlineNanos;
  private final Deadlines deadlines;
  private final Ticker ticker;
  private final long marginMillis;
  /** Deadlines of asynchronous calls: a wheel, whose schedule and cancel never take a lock. */
  private final HashedWheelTimer timer;
  private final LongAdder failures = new LongAdder();
  private final LongAdder givenBackLate = new LongAdder();
  private final LongAdder replicaUnacknowledged = new LongAdder();
  private final AtomicBoolean healthy = new AtomicBoolean(true);
  private final SlotDecisions slotDecisions;
  private final Updates updates;

  private RedisStore(Builder b, Endpoint endpoint) {
    this.endpoint = endpoint;
    this.layout = new KeyLayout(b.keyPrefix);
    this.calls = new DecisionCalls(endpoint, DecisionScript.load(), b.scriptsOnly, b.replicaAcknowledgement);
    this.refusals = new RefusalMemory(b.refusalMemory.toNanos());
    this.coalescer = new Coalescer(calls, refusals, !endpoint.cluster());
    this.failurePolicy = b.failurePolicy;
    this.deadlineNanos = b.decisionDeadline.toNanos();
    this.deadlines = new Deadlines(endpoint, b.decisionDeadline, b.writeTimeout, b.maxOutstanding);
    this.ticker = b.ticker;
    this.marginMillis = b.ticker == null ? 0 : TEST_TTL_MARGIN_MILLIS;
    this.timer = new HashedWheelTimer(r -> {
      Thread t = new Thread(r, "headroom-redis-deadline");
      t.setDaemon(true);
      return t;
    }, TIMER_TICK_MILLIS, TimeUnit.MILLISECONDS, TIMER_WHEEL_TICKS);
    this.timer.start(); // now, so that no caller ever waits for the wheel's thread to start
    InMemoryStore own = null;
    if (b.failurePolicy == FailurePolicy.FALLBACK && b.fallback == null) {
      InMemoryStore.Builder local = InMemoryStore.builder().maxKeys(b.fallbackMaxKeys);
      if (b.ticker != null) {
        local.ticker(b.ticker);
      }
      own = local.build();
    }
    this.fallback = b.failurePolicy == FailurePolicy.FALLBACK ? new Fallback(b.fallback, own, timer) : null;
    this.slotDecisions = new SlotDecisions(this, deadlines, deadlineNanos, timer, failures, givenBackLate);
    this.updates = new Updates(this, calls, refusals, deadlines, timer, failures, failurePolicy, fallback);
  }

  /** Starts a builder; give it exactly one way to reach Redis. */
  public static Builder builder() {
    return new Builder();
  }

  /** The failure policy this store follows. */
  public FailurePolicy failurePolicy() {
    return failurePolicy;
  }

  /** The local store that decides while Redis is away, when the failure policy is FALLBACK. */
  public Optional<Store> fallback() {
    return Optional.ofNullable(fallback).map(Fallback::store);
  }

  /** The key prefix. */
  public String keyPrefix() {
    return layout.prefix();
  }

  /** Decisions and updates that Redis could not make in time, since creation. */
  public long failures() {
    return failures.sum();
  }

  /** Decisions that Redis applied after their deadline and that were given back, since creation. */
  public long givenBackLate() {
    return givenBackLate.sum();
  }

  /**
   * Admissions whose write fewer replicas acknowledged than {@link Builder#replicaAcknowledgements}
   * asks, within its timeout, since creation: these followed the failure policy. Always 0 when
   * no acknowledgements are asked for.
   */
  public long replicaUnacknowledged() {
    return replicaUnacknowledged.sum();
  }

  /**
   * Decisions that Redis did not answer within the decision deadline after their command was
   * written to it (or, without a connection, after they were asked for), since creation: these
   * followed the failure policy.
   */
  public long deadlinesPassed() {
    return deadlines.deadlinesPassed();
  }

  /**
   * Decisions refused with {@link StoreOverloadedException} since creation: the store's own queue
   * was full, or its connection did not write the command within the write timeout. Redis was not
   * asked, or not in time; these do not follow the failure policy.
   */
  public long shed() {
    return deadlines.shed();
  }

  /**
   * Decisions refused from a refusal this store remembers, without a round trip to Redis, since
   * creation (see {@link Builder#refusalMemory}).
   */
  public long refusalsRemembered() {
    return refusals.answered();
  }

  /**
   * Decisions sent to Redis whose reply has not arrived yet (a blocking caller's until it has taken
   * its reply).
   */
  public int outstanding() {
    return deadlines.outstanding();
  }

  /** Whether a connection to Redis is open now. */
  public boolean connected() {
    return endpoint.connected();
  }

  /** {@inheritDoc} Read by {@link StoreHealthReading}: connected or not, and what decides meanwhile. */
  @Override
  public StoreHealth health(boolean refuses) {
    return StoreHealthReading.of(this, refuses);
  }

  /**
   * Decides on the caller's thread. For a request of one slot (every request on a standalone
   * Redis) the caller waits on Lettuce's command itself, then reads the reply and builds the
   * decision: Lettuce's I/O thread, which all callers share, only completes the command, with no
   * chain of stages behind it. The caller's thread also waits out the deadline itself: no timer
   * task per decision.
   *
   * @throws RedisUnavailableException when Redis cannot decide and the policy is to fail closed
   * @throws StoreOverloadedException when this store's own queue to Redis is full (any policy)
   */
  @Override
  public Decision acquire(List<Acquisition> acquisitions) {
    List<Acquisition> request = checked(acquisitions);
    List<SlotShare> groups = SlotShare.of(layout, endpoint.cluster(), request);
    if (groups.size() == 1) {
      return acquireOneSlot(request, groups);
    }
    SlotDecisions.Pending p = slotDecisions.decide(request, groups);
    while (!p.result.isDone()) {
      try {
        p.result.get(deadlines.untilCheck(p.stamp()), TimeUnit.NANOSECONDS);
      } catch (TimeoutException e) {
        p.check();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        p.expire(deadlines::passed);
      } catch (ExecutionException e) {
        break; // reported by join below
      }
    }
    try {
      return p.result.join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof RuntimeException) {
        throw (RuntimeException) e.getCause();
      }
      throw new StoreException("the Redis store failed", e.getCause());
    }
  }

  /** {@link #acquire} of a request whose policies share one slot: one call, awaited here. */
  private Decision acquireOneSlot(List<Acquisition> request, List<SlotShare> groups) {
    SlotShare g = groups.get(0);
    StoreOverloadedException full = deadlines.refuseOverLimit();
    if (full != null) {
      throw full;
    }
    RedisClusterAsyncCommands<byte[], byte[]> c = endpoint.commandsNow();
    DecisionScript.Call call = encode(DecisionScript.ACQUIRE, now(), g.acquisitions(), null);
    CompletableFuture<long[]> reply = c == null ? calls.call(call, g.stamp()) : coalescer.send(c, call, g.stamp());
    // Counted out here once the reply is in hand (no completion stage per decision for the I/O
    // thread to run); a caller that stops waiting leaves it to a stage on the reply.
    deadlines.sent();
    boolean countedHere = true;
    try {
      boolean recovering = c == null;
      boolean caughtUp = false;
      while (true) {
        long[] answer;
        try {
          answer = reply.get(deadlines.untilCheck(g.stamp()), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
          ReplicaAcknowledgement.Unacknowledged unacknowledged = ReplicaAcknowledgement.unacknowledged(e);
          if (unacknowledged != null) {
            return unacknowledged(request, g, unacknowledged);
          }
          if (!recovering) {
            // Redis lacked the code (or FCALL): load it and call again, within the same deadline.
            recovering = true;
            reply = calls.recover(c, call, e.getCause(), g.stamp());
            continue;
          }
          return failed(request, e.getCause());
        } catch (TimeoutException | InterruptedException e) {
          boolean interrupted = e instanceof InterruptedException;
          if (interrupted) {
            Thread.currentThread().interrupt();
          } else if (deadlines.waiting(g.stamp())) {
            continue; // written meanwhile: the deadline now counts from the write
          } else if (!caughtUp && deadlines.ioCaughtUp(g.stamp())) {
            caughtUp = true; // the I/O loop has read what had arrived: look at the reply once more
            continue;
          }
          // The failure policy decides; what Redis applies later is given back.
          countedHere = false;
          reply.whenComplete((r, error) -> deadlines.answered());
          g.reply(reply);
          slotDecisions.giveBackWhenAllowed(groups, true);
          Exception why = interrupted ? deadlines.passed() : deadlines.expired(g.stamp());
          if (why instanceof StoreOverloadedException) {
            throw (StoreOverloadedException) why;
          }
          return failed(request, why);
        }
        List<PolicyOutcome> outcomes;
        try {
          outcomes = DecisionScript.outcomes(answer, g.acquisitions());
        } catch (RuntimeException e) {
          return failed(request, e);
        }
        succeeded();
        return Decision.of(outcomes);
      }
    } finally {
      if (countedHere) {
        deadlines.answered();
      }
    }
  }

  /**
   * Decides without blocking: admission and coalescing on the caller's thread, the command written
   * on the connection's event loop (handed to it from any other thread, lock-free; see
   * {@link Endpoint}), its deadline watched on the store's timer wheel, which takes no lock either.
   * Completes on Lettuce's I/O thread (or the timer's): a caller on an event loop of its own hands
   * its continuation back there.
   */
  @Override
  public CompletionStage<Decision> acquireAsync(List<Acquisition> acquisitions) {
    List<Acquisition> request = checked(acquisitions);
    SlotDecisions.Pending p = slotDecisions.decide(request, SlotShare.of(layout, endpoint.cluster(), request));
    if (!p.result.isDone()) {
      p.schedule();
    }
    return p.result;
  }

  private static List<Acquisition> checked(List<Acquisition> acquisitions) {
    if (acquisitions == null || acquisitions.isEmpty()) {
      throw new IllegalArgumentException("acquisitions: expected at least one, got none");
    }
    return List.copyOf(acquisitions);
  }

  /**
   * Redis could not decide: the failure policy's decision.
   *
   * @throws RedisUnavailableException with {@link FailurePolicy#FAIL_CLOSED}
   */
  Decision failed(List<Acquisition> request, Throwable cause) {
    Throwable why = cause instanceof CompletionException && cause.getCause() != null ? cause.getCause() : cause;
    failures.increment();
    return byPolicy(request, why);
  }

  /**
   * Redis decided a request of one slot, and fewer replicas than asked acknowledged the write
   * ({@link Builder#replicaAcknowledgements}). A refusal stands: it committed nothing a failover
   * could lose. An admission follows the failure policy: fail-open keeps Redis's own decision
   * (admitted, counted on the master); fail-closed refuses and fallback asks the local store, and
   * both give the master's admission back, so that Redis never counts a request it did not admit.
   *
   * @throws RedisUnavailableException with {@link FailurePolicy#FAIL_CLOSED}
   */
  Decision unacknowledged(List<Acquisition> request, SlotShare g, ReplicaAcknowledgement.Unacknowledged why) {
    long[] reply = why.reply();
    List<PolicyOutcome> outcomes;
    try {
      outcomes = DecisionScript.outcomes(reply, g.acquisitions());
    } catch (RuntimeException e) {
      return failed(request, e);
    }
    if (!DecisionScript.allAllowed(reply)) {
      succeeded();
      return Decision.of(outcomes);
    }
    replicaUnacknowledged.increment();
    if (failurePolicy == FailurePolicy.FAIL_OPEN) {
      warnOnce(why);
      return Decision.of(outcomes);
    }
    slotDecisions.giveBack(g, g.leaseIds(reply), 1);
    return byPolicy(request, why);
  }

  private void warnOnce(Throwable why) {
    if (healthy.compareAndSet(true, false)) {
      outages.incrementAndGet();
      LOG.warn("Headroom's Redis store cannot decide ({}); following {} until Redis answers again",
          why.toString(), failurePolicy);
    }
  }

  /** The failure policy's decision, after Redis could not decide (or keep) one. */
  private Decision byPolicy(List<Acquisition> request, Throwable why) {
    warnOnce(why);
    switch (failurePolicy) {
      case FAIL_OPEN: {
        List<PolicyOutcome> outcomes = new ArrayList<>(request.size());
        for (Acquisition a : request) {
          outcomes.add(new PolicyOutcome(a.policy(), a.key(), a.cost(), true, a.policy().quota(), 0, 0, null));
        }
        return Decision.of(outcomes);
      }
      case FAIL_CLOSED:
        throw new RedisUnavailableException("the Redis store could not decide: " + why.getMessage(), why);
      default:
        return fallback.decide(request);
    }
  }

  void succeeded() {
    // Read first: a compare-and-set on every decision would make all callers write one cache line.
    if (!healthy.get() && healthy.compareAndSet(false, true)) {
      LOG.info("Headroom's Redis store decides through Redis again");
      if (fallback != null) {
        long outage = outages.get();
        fallback.redisReturned(() -> healthy.get() && outages.get() == outage);
      }
    }
  }

  @Override
  public void charge(Acquisition acquisition) {
    updates.charge(acquisition);
  }

  @Override
  public void refund(Acquisition acquisition) {
    updates.refund(acquisition);
  }

  @Override
  public void release(Lease lease) {
    updates.release(lease);
  }

  /** Charges without blocking (see {@link AsyncUpdate}); the stage never fails. */
  @Override
  public CompletionStage<Void> chargeAsync(Acquisition acquisition) {
    return updates.chargeAsync(acquisition);
  }

  /** Refunds without blocking (see {@link AsyncUpdate}); the stage never fails. */
  @Override
  public CompletionStage<Void> refundAsync(Acquisition acquisition) {
    return updates.refundAsync(acquisition);
  }

  /** Gives back a lease without blocking (see {@link AsyncUpdate}); the stage never fails. */
  @Override
  public CompletionStage<Void> releaseAsync(Lease lease) {
    return updates.releaseAsync(lease);
  }

  /**
   * A decision's call, coalesced with the calls on the same keys in flight ({@link Coalescer});
   * without a connection yet, sent alone once one opens. Recovers as {@link DecisionCalls#send}
   * does when Redis lacks the library.
   */
  CompletableFuture<long[]> coalesced(DecisionScript.Call call, WriteStamp stamp) {
    RedisClusterAsyncCommands<byte[], byte[]> c = endpoint.commandsNow();
    if (c == null) {
      return calls.call(call, stamp);
    }
    return coalescer.send(c, call, stamp).exceptionallyCompose(e -> calls.recover(c, call, e, stamp));
  }

  /** A call that no caller waits on past its reply (a give-back): its stamp only marks the write. */
  CompletableFuture<long[]> call(byte[] mode, Long now, List<Acquisition> acquisitions, long[] leaseIds) {
    updates.givingBack(mode);
    return calls.call(encode(mode, now, acquisitions, leaseIds), new WriteStamp(System.nanoTime()));
  }

  /** The keys and arguments of a call, encoded on the calling thread (see {@link DecisionScript#encode}). */
  DecisionScript.Call encode(byte[] mode, Long now, List<Acquisition> acquisitions, long[] leaseIds) {
    return DecisionScript.encode(layout, endpoint.cluster(), mode, now, marginMillis, acquisitions, leaseIds);
  }

  Long now() {
    return ticker == null ? null : ticker.read();
  }

  @Override
  public void close() {
    timer.stop();
    endpoint.close();
    if (fallback != null) {
      fallback.close();
    }
  }

  /**
   * Builds a {@link RedisStore}. Exactly one of {@link #uri}, {@link #clusterUris}, {@link #client},
   * {@link #clusterClient}, {@link #connection} or {@link #clusterConnection} says how to reach
   * Redis; everything else has a default.
   */
  public static final class Builder {
    private RedisURI uri;
    private List<RedisURI> clusterUris;
    private RedisClient client;
    private RedisClusterClient clusterClient;
    private StatefulRedisConnection<byte[], byte[]> connection;
    private StatefulRedisClusterConnection<byte[], byte[]> clusterConnection;
    private String keyPrefix = DEFAULT_KEY_PREFIX;
    private FailurePolicy failurePolicy = FailurePolicy.FAIL_CLOSED;
    private Store fallback;
    private long fallbackMaxKeys = InMemoryStore.DEFAULT_MAX_KEYS;
    private Duration decisionDeadline = DEFAULT_DECISION_DEADLINE;
    private Duration writeTimeout = DEFAULT_WRITE_TIMEOUT;
    private int maxOutstanding = DEFAULT_MAX_OUTSTANDING;
    private Ticker ticker;
    private boolean scriptsOnly;
    private Duration refusalMemory = DEFAULT_REFUSAL_MEMORY;
    private ClientResources clientResources;
    private ReplicaAcknowledgement replicaAcknowledgement;

    private Builder() {}

    /**
     * Keeps an admission only once at least {@code replicas} replicas of the master have
     * acknowledged its write, within {@code timeout}: after each call that may admit, the store
     * sends Redis {@code WAIT replicas timeout} on the same connection, pipelined (no thread waits
     * for it). An admission acknowledged by fewer follows the failure policy: fail-closed refuses
     * it ({@link RedisUnavailableException}), fail-open admits it, fallback decides it in the local
     * store; fail-closed and fallback give the master's write back. Each is counted in
     * {@link RedisStore#replicaUnacknowledged()}. A refusal stands whatever {@code WAIT} answers.
     *
     * <p>This closes the over-admission of a Sentinel failover (Redis replicates asynchronously,
     * so a promoted replica may lack the last admissions the old master counted; headroom-redis
     * README, "Sentinel and Cluster failover"): with {@code replicas} equal to the replicas
     * Sentinel may promote, every admission kept is on the replica that takes over. The price is
     * the connection's pace: Redis reads none of the connection's next commands while it waits for
     * the replicas (BENCHMARKS.md, "Replica acknowledgements"). Off by default. Standalone and
     * Sentinel only: {@link #build()} refuses it with a Cluster ({@code WAIT} counts the replicas
     * of whichever node receives it). {@code replicas} from 1 to 100; {@code timeout} from 1 ms to 1 minute, and
     * shorter than the decision deadline, which also counts the wait.
     */
    public Builder replicaAcknowledgements(int replicas, Duration timeout) {
      this.replicaAcknowledgement = new ReplicaAcknowledgement(replicas, timeout);
      return this;
    }

    /**
     * The Lettuce resources (event loops, timers) of the client the store opens itself with
     * {@link #uri} or {@link #clusterUris}; by default the client has its own. They stay the
     * caller's: closing the store leaves them running, so shut them down after the store. An
     * event-driven server passes resources over its own event loops, so that the connection's
     * reads and writes run on a loop that is awake anyway, not on a thread of their own woken for
     * each reply ({@link ServingLoops#clientResources} makes such resources; the gateway and Spring
     * Cloud Gateway's {@code store.redis-event-loops: server} use it: headroom-redis/README.md, "On
     * the caller's event loops").
     */
    public Builder clientResources(ClientResources resources) {
      this.clientResources = Objects.requireNonNull(resources, "clientResources");
      return this;
    }

    /**
     * The longest this store answers a request equal to one Redis refused with that refusal,
     * without a round trip, while the refusal's Retry-After runs (see headroom-redis/README.md,
     * "Refusals remembered"). Exact within this process, whose give-backs end it at once; a
     * give-back by another process is seen within this bound. {@link Duration#ZERO} sends every
     * request to Redis. Default {@link #DEFAULT_REFUSAL_MEMORY}.
     */
    public Builder refusalMemory(Duration limit) {
      Objects.requireNonNull(limit, "refusalMemory");
      if (limit.isNegative() || limit.compareTo(Duration.ofHours(1)) > 0) {
        throw new IllegalArgumentException("refusalMemory: expected from 0 to 1 hour, got " + limit);
      }
      this.refusalMemory = limit;
      return this;
    }

    /** Tests only: decide with EVALSHA, as before Redis 7, even when Redis has functions. */
    Builder scriptsOnly() {
      this.scriptsOnly = true;
      return this;
    }

    /**
     * A standalone Redis, as a URI ({@code redis://host:port/db}, {@code rediss://} for TLS), or a
     * master watched by Redis Sentinel, in Lettuce's form
     * {@code redis-sentinel://host:port[,host:port]/?sentinelMasterId=NAME}: the store asks the
     * Sentinels for the master at every (re)connection, so after a failover it reconnects to the
     * promoted replica (headroom-redis README, "Sentinel and Cluster failover"). The store owns
     * the client: it rejects commands while disconnected (so that nothing queues up to be applied
     * after the decision was made without Redis) and reconnects by itself.
     */
    public Builder uri(String uri) {
      RedisURI parsed;
      try {
        parsed = RedisURI.create(Objects.requireNonNull(uri, "uri"));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("uri: expected a Redis URI such as redis://127.0.0.1:6379 or "
            + "redis-sentinel://127.0.0.1:26379/?sentinelMasterId=mymaster, got '" + uri + "': " + e.getMessage(), e);
      }
      return uri(parsed);
    }

    /**
     * A standalone Redis, or a Sentinel-watched master (a URI with Sentinels must name the
     * master: {@code sentinelMasterId}); see {@link #uri(String)}.
     */
    public Builder uri(RedisURI uri) {
      Objects.requireNonNull(uri, "uri");
      if (!uri.getSentinels().isEmpty() && (uri.getSentinelMasterId() == null || uri.getSentinelMasterId().isBlank())) {
        throw new IllegalArgumentException("uri: expected the Sentinel master's name, as in "
            + "redis-sentinel://127.0.0.1:26379/?sentinelMasterId=mymaster, got '" + uri + "' without sentinelMasterId");
      }
      this.uri = uri;
      return this;
    }

    /** A Redis Cluster, by one or more of its nodes; the store owns the client. */
    public Builder clusterUris(List<RedisURI> uris) {
      if (uris == null || uris.isEmpty()) {
        throw new IllegalArgumentException("clusterUris: expected at least one node URI, got none");
      }
      this.clusterUris = List.copyOf(uris);
      return this;
    }

    /**
     * A caller's standalone client: the store opens its connection with it and closes only that
     * connection. Configure it with {@code DisconnectedBehavior.REJECT_COMMANDS}, as
     * {@link #uri(RedisURI)} does, or decisions made during an outage may be applied when Redis
     * returns (they are then given back, one round trip each).
     */
    public Builder client(RedisClient client) {
      this.client = Objects.requireNonNull(client, "client");
      return this;
    }

    /** A caller's Cluster client; see {@link #client(RedisClient)}. */
    public Builder clusterClient(RedisClusterClient client) {
      this.clusterClient = Objects.requireNonNull(client, "clusterClient");
      return this;
    }

    /** A caller's open connection (byte-array codec), used as it is and never closed by the store. */
    public Builder connection(StatefulRedisConnection<byte[], byte[]> connection) {
      this.connection = Objects.requireNonNull(connection, "connection");
      return this;
    }

    /** A caller's open Cluster connection (byte-array codec), never closed by the store. */
    public Builder clusterConnection(StatefulRedisClusterConnection<byte[], byte[]> connection) {
      this.clusterConnection = Objects.requireNonNull(connection, "clusterConnection");
      return this;
    }

    /**
     * The prefix of every key; defaults to {@code headroom:}. Up to 128 characters,
     * no braces (the hash tag is the partition's).
     */
    public Builder keyPrefix(String keyPrefix) {
      new KeyLayout(keyPrefix); // validates
      this.keyPrefix = keyPrefix;
      return this;
    }

    /** What to do when Redis cannot decide in time; defaults to {@link FailurePolicy#FAIL_CLOSED}. */
    public Builder failurePolicy(FailurePolicy failurePolicy) {
      if (failurePolicy == null) {
        throw new IllegalArgumentException("failurePolicy: expected FAIL_OPEN, FAIL_CLOSED or FALLBACK, got null");
      }
      this.failurePolicy = failurePolicy;
      return this;
    }

    /**
     * The local store for {@link FailurePolicy#FALLBACK}; defaults to a new {@link InMemoryStore}
     * (with the test ticker, when one is given). The caller keeps ownership of a store given here.
     */
    public Builder fallback(Store fallback) {
      this.fallback = Objects.requireNonNull(fallback, "fallback");
      return this;
    }

    /**
     * The bound on keys of the {@link InMemoryStore} this store builds for
     * {@link FailurePolicy#FALLBACK} when no {@link #fallback} is given; defaults to
     * {@link InMemoryStore#DEFAULT_MAX_KEYS}. That store keeps its flood guarantee: a key refused
     * while Redis is away stays refused however many keys push it out (see {@link InMemoryStore}).
     */
    public Builder fallbackMaxKeys(long maxKeys) {
      if (maxKeys < 1) {
        throw new IllegalArgumentException("fallbackMaxKeys: expected at least 1, got " + maxKeys);
      }
      this.fallbackMaxKeys = maxKeys;
      return this;
    }

    /**
     * How long a decision waits for Redis's reply, counted from the moment its command is written
     * to the connection, before the failure policy decides instead: the most latency Redis can add.
     * The wait before the write is this process's own queue, bounded by {@link #writeTimeout}.
     * From 1 ms to 1 minute; defaults to 100 ms.
     */
    public Builder decisionDeadline(Duration deadline) {
      if (deadline == null || deadline.compareTo(Duration.ofMillis(1)) < 0 || deadline.compareTo(Duration.ofMinutes(1)) > 0) {
        throw new IllegalArgumentException("decisionDeadline: expected from 1 ms to 1 minute, got " + deadline);
      }
      this.decisionDeadline = deadline;
      return this;
    }

    /**
     * How long a decision may wait in this store's own queue before Lettuce writes its command to
     * Redis. The decision deadline counts from that write, so that this process's own backlog
     * (its I/O thread behind on a busy machine) is never taken for a slow Redis; a decision still
     * unwritten after this long is refused with {@link StoreOverloadedException}. From 1 ms to 1
     * minute, at least the decision deadline (a shorter one is raised to it); defaults to 1 s.
     */
    public Builder writeTimeout(Duration timeout) {
      if (timeout == null || timeout.compareTo(Duration.ofMillis(1)) < 0 || timeout.compareTo(Duration.ofMinutes(1)) > 0) {
        throw new IllegalArgumentException("writeTimeout: expected from 1 ms to 1 minute, got " + timeout);
      }
      this.writeTimeout = timeout;
      return this;
    }

    /**
     * The most decisions that may await Redis's reply at once; one more is refused at once with
     * {@link StoreOverloadedException}, whatever the failure policy. Bounds the memory a flood
     * can pin in the connection's queues. From 1 to 1,000,000; defaults to 10,000.
     */
    public Builder maxOutstanding(int max) {
      if (max < 1 || max > 1_000_000) {
        throw new IllegalArgumentException("maxOutstanding: expected from 1 to 1000000, got " + max);
      }
      this.maxOutstanding = max;
      return this;
    }

    /**
     * For tests only: read time from this ticker (a {@link dev.headroom.ManualTicker}) and send it
     * to the script, instead of Redis {@code TIME}. Processes sharing keys must then share the
     * ticker's notion of time; keys are kept an hour beyond their state, since Redis expires them
     * by its own clock.
     */
    public Builder ticker(Ticker ticker) {
      this.ticker = Objects.requireNonNull(ticker, "ticker");
      return this;
    }

    /**
     * Builds the store. A store that opens its own connection starts even when Redis is down
     * (decisions follow the failure policy until it connects).
     *
     * @throws IllegalArgumentException when not exactly one way to reach Redis was given
     */
    public RedisStore build() {
      int ways = (uri != null ? 1 : 0) + (clusterUris != null ? 1 : 0) + (client != null ? 1 : 0)
          + (clusterClient != null ? 1 : 0) + (connection != null ? 1 : 0) + (clusterConnection != null ? 1 : 0);
      if (ways != 1) {
        throw new IllegalArgumentException("redis: expected exactly one of uri, clusterUris, client, clusterClient, "
            + "connection or clusterConnection, got " + ways);
      }
      if (clientResources != null && uri == null && clusterUris == null) {
        throw new IllegalArgumentException("clientResources: used only when the store opens its own client "
            + "(uri or clusterUris); a client or connection given brings its own resources");
      }
      if (replicaAcknowledgement != null) {
        if (clusterUris != null || clusterClient != null || clusterConnection != null) {
          throw new IllegalArgumentException("replicaAcknowledgements: not supported on Redis Cluster: WAIT has no "
              + "key, so it reaches whichever node the connection picks and counts that node's replicas, not those "
              + "of the masters that wrote the admissions; remove replicaAcknowledgements or use a standalone or "
              + "Sentinel-watched Redis");
        }
        if (replicaAcknowledgement.timeout().compareTo(decisionDeadline) >= 0) {
          throw new IllegalArgumentException("replicaAcknowledgements.timeout: expected less than the decision "
              + "deadline (" + decisionDeadline.toMillis() + " ms), which counts the wait for the replicas too, got "
              + replicaAcknowledgement.timeout().toMillis() + " ms");
        }
      }
      if (fallback != null && failurePolicy != FailurePolicy.FALLBACK) {
        throw new IllegalArgumentException("fallback: a fallback store is used only with failurePolicy FALLBACK, "
            + "got failurePolicy " + failurePolicy);
      }
      return new RedisStore(this, endpoint());
    }

    private Endpoint endpoint() {
      if (connection != null) {
        return Endpoint.of(connection);
      }
      if (clusterConnection != null) {
        return Endpoint.of(clusterConnection);
      }
      if (client != null) {
        RedisClient c = client; // created with its URI: connect() without one uses it
        return Endpoint.opening(false, () -> CompletableFuture.supplyAsync(() -> c.connect(ByteArrayCodec.INSTANCE)),
            () -> {});
      }
      if (clusterClient != null) {
        RedisClusterClient c = clusterClient;
        return Endpoint.opening(true, () -> Endpoint.connectCluster(c), () -> {});
      }
      if (uri != null) {
        return Endpoint.owned(uri, COMMAND_TIMEOUT, clientResources);
      }
      return Endpoint.ownedCluster(clusterUris, COMMAND_TIMEOUT, clientResources);
    }
  }
}
