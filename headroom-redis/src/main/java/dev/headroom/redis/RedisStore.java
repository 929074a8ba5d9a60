package dev.headroom.redis;

import dev.headroom.Acquisition;
import dev.headroom.Decision;
import dev.headroom.InMemoryStore;
import dev.headroom.Lease;
import dev.headroom.PolicyOutcome;
import dev.headroom.Store;
import dev.headroom.StoreException;
import dev.headroom.Ticker;
import dev.headroom.redis.internal.DecisionScript;
import dev.headroom.redis.internal.Endpoint;
import dev.headroom.redis.internal.FcallArgs;
import dev.headroom.redis.internal.KeyLayout;
import dev.headroom.redis.internal.LongArrayOutput;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.protocol.CommandType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
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
 * <p><b>Time</b> is Redis {@code TIME}, read inside the script, so that gateway nodes whose clocks
 * disagree still agree on every window. Only when the builder is given a {@link Ticker} (a test
 * mode for {@link dev.headroom.ManualTicker}) does the script take the caller's time instead.
 *
 * <p><b>Exact integers in Lua.</b> Lua numbers are IEEE doubles, exact only below 2^53, while epoch
 * nanoseconds are near 1.8e18 and a 366-day window is 3.2e16 ns. The script therefore keeps every
 * time and duration as a pair (seconds, nanoseconds below 10^9): a sum or difference is a carry,
 * a product by a unit count is split into parts that stay below 2^53, and the window index
 * {@code floor(now / w)} is {@code floor(seconds / w_seconds)} because windows are whole seconds.
 * Constants that need division ({@code T = ceil(w / q)}, {@code tau = q T}) come from Java. The
 * token bucket's {@code floor(h / T)} is estimated in doubles and corrected with exact products.
 * The sliding window's weight is computed in doubles in the order the core states, and converting
 * (seconds, nanoseconds) to a double rounds once, exactly as Java's {@code (double)} cast does.
 * Times saturate at {@code Long.MAX_VALUE} as in the core; window counters saturate at 2^53 units
 * instead of 2^63 (a debt no real charge reaches), which is the one documented difference.
 *
 * <p><b>Keys</b> ({@link KeyLayout}): {@code prefix + policy + ":" + algorithm + ":{partition}"}, the
 * partition being the Cluster hash tag. Each write sets the key to expire when its state becomes
 * equal to an absent key's (a full bucket, a past window, no live lease), so memory is bounded by
 * the partitions active within their windows.
 *
 * <p><b>Redis Cluster.</b> Policies of one partition share a slot and are decided by one script. A
 * request whose policies fall in several slots is decided by reservation and refund: one script
 * per slot, all at once; when any refuses, the slots that admitted are given back (a refund, or
 * the release of a lease) and report their state after that. Between the reservation and the
 * refund (one round trip) the reserved units are held, so a concurrent request may be refused
 * where a single script would have admitted it; it is never admitted beyond a quota.
 *
 * <p><b>Failures</b> follow the {@link FailurePolicy}. A decision that Redis does not answer within
 * the decision deadline is decided by that policy; if Redis applies it later, the late reply is
 * seen and whatever it consumed is given back, so a slow Redis does not charge a request twice.
 * Only a reply lost with its connection (Redis applied the script, then the link broke before the
 * answer) can leave one request counted in Redis without being admitted by it. Lettuce exceptions
 * never escape: {@link #acquire} returns a decision or throws {@link RedisUnavailableException}
 * (fail closed only). {@link #charge}, {@link #refund} and {@link #release} are best effort: they
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
 * RateLimiter limiter = RateLimiter.of(store);
 * }</pre>
 *
 * <p>Thread-safe. Callbacks of {@link #acquireAsync} may run on a Lettuce I/O thread: do not block
 * in them.
 */
public final class RedisStore implements Store {

  /** The default decision deadline: how long a decision may wait for Redis. */
  public static final Duration DEFAULT_DECISION_DEADLINE = Duration.ofMillis(100);

  /** The default key prefix. */
  public static final String DEFAULT_KEY_PREFIX = "headroom:";

  /**
   * With a test ticker, keys live this much longer than their state: the ticker's time is not
   * the time by which Redis expires keys, and a key must not vanish while the test still needs it.
   */
  static final long TEST_TTL_MARGIN_MILLIS = 3_600_000;

  /** How long Lettuce keeps a command before failing it: long enough to see late replies. */
  static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(10);

  private static final Logger LOG = LoggerFactory.getLogger(RedisStore.class);

  private final Endpoint endpoint;
  private final KeyLayout layout;
  private final DecisionScript script;
  private final byte[] functionName;
  private final byte[] shaBytes;
  private final FailurePolicy failurePolicy;
  private final Store fallback;
  private final boolean ownsFallback;
  private final long deadlineNanos;
  private final Ticker ticker;
  private final long marginMillis;
  private final ScheduledThreadPoolExecutor timer;
  private final LongAdder failures = new LongAdder();
  private final LongAdder givenBackLate = new LongAdder();
  private final AtomicBoolean healthy = new AtomicBoolean(true);
  /** Whether Redis has functions (7 and later); cleared for good when it answers that it has no FCALL. */
  private volatile boolean functions;
  /** The library load under way, if any. */
  private final AtomicReference<CompletableFuture<Void>> loading = new AtomicReference<>();

  private RedisStore(Builder b, Endpoint endpoint) {
    this.endpoint = endpoint;
    this.layout = new KeyLayout(b.keyPrefix);
    this.script = DecisionScript.load();
    this.functionName = script.function().getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    this.shaBytes = script.sha().getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    this.failurePolicy = b.failurePolicy;
    this.deadlineNanos = b.decisionDeadline.toNanos();
    this.ticker = b.ticker;
    this.marginMillis = b.ticker == null ? 0 : TEST_TTL_MARGIN_MILLIS;
    this.functions = !b.scriptsOnly;
    if (b.failurePolicy == FailurePolicy.FALLBACK && b.fallback == null) {
      InMemoryStore.Builder local = InMemoryStore.builder().maxKeys(b.fallbackMaxKeys);
      if (b.ticker != null) {
        local.ticker(b.ticker);
      }
      this.fallback = local.build();
      this.ownsFallback = true;
    } else {
      this.fallback = b.fallback;
      this.ownsFallback = false;
    }
    this.timer = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, "headroom-redis-deadline");
      t.setDaemon(true);
      return t;
    });
    this.timer.setRemoveOnCancelPolicy(true);
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
    return Optional.ofNullable(fallback);
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

  /** Whether a connection to Redis is open now. */
  public boolean connected() {
    return endpoint.connected();
  }

  /**
   * Decides on the caller's thread. For a request of one slot (every request on a standalone
   * Redis) the caller waits on Lettuce's command itself, then reads the reply and builds the
   * decision: Lettuce's I/O thread, which all callers share, only completes the command, with no
   * chain of stages behind it. The caller's thread also waits out the deadline itself: no timer
   * task per decision.
   */
  @Override
  public Decision acquire(List<Acquisition> acquisitions) {
    List<Acquisition> request = checked(acquisitions);
    List<Group> groups = group(request);
    if (groups.size() == 1) {
      return acquireOneSlot(request, groups);
    }
    Pending p = decide(request, groups);
    try {
      p.result.get(deadlineNanos, TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      p.expire();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      p.expire();
    } catch (ExecutionException e) {
      // reported by join below
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
  private Decision acquireOneSlot(List<Acquisition> request, List<Group> groups) {
    long start = System.nanoTime();
    Group g = groups.get(0);
    RedisClusterAsyncCommands<byte[], byte[]> c = endpoint.commandsNow();
    DecisionScript.Call call = encode(DecisionScript.ACQUIRE, now(), g.acquisitions, null);
    CompletableFuture<long[]> reply = c == null ? endpoint.commands().thenCompose(connected -> send(connected, call))
        : sendOnce(c, call);
    boolean recovering = c == null;
    while (true) {
      long[] answer;
      try {
        answer = reply.get(deadlineNanos - (System.nanoTime() - start), TimeUnit.NANOSECONDS);
      } catch (ExecutionException e) {
        if (!recovering) {
          // Redis lacked the code (or FCALL): load it and call again, within the same deadline.
          recovering = true;
          reply = recover(c, call, e.getCause());
          continue;
        }
        return failed(request, e.getCause());
      } catch (TimeoutException | InterruptedException e) {
        if (e instanceof InterruptedException) {
          Thread.currentThread().interrupt();
        }
        // The failure policy decides; what Redis applies later is given back.
        g.reply = reply;
        giveBackWhenAllowed(groups, true);
        return failed(request, deadlinePassed());
      }
      List<PolicyOutcome> outcomes;
      try {
        outcomes = DecisionScript.outcomes(answer, g.acquisitions);
      } catch (RuntimeException e) {
        return failed(request, e);
      }
      succeeded();
      return Decision.of(outcomes);
    }
  }

  @Override
  public CompletionStage<Decision> acquireAsync(List<Acquisition> acquisitions) {
    List<Acquisition> request = checked(acquisitions);
    Pending p = decide(request, group(request));
    if (!p.result.isDone()) {
      ScheduledFuture<?> deadline = timer.schedule(p::expire, deadlineNanos, TimeUnit.NANOSECONDS);
      p.result.whenComplete((d, e) -> deadline.cancel(false));
    }
    return p.result;
  }

  /** One slot's share of a request: the acquisitions and their places in the request. */
  private static final class Group {
    final List<Acquisition> acquisitions = new ArrayList<>(2);
    final List<Integer> indexes = new ArrayList<>(2);
    CompletableFuture<long[]> reply;
  }

  /** A decision under way: settled once, by Redis's answer or by the deadline. */
  private final class Pending {
    final List<Acquisition> request;
    final List<Group> groups;
    final CompletableFuture<Decision> result = new CompletableFuture<>();
    final AtomicBoolean settled = new AtomicBoolean();

    Pending(List<Acquisition> request, List<Group> groups) {
      this.request = request;
      this.groups = groups;
    }

    /** The deadline passed: the failure policy decides; what Redis applies later is given back. */
    void expire() {
      if (settled.compareAndSet(false, true)) {
        giveBackWhenAllowed(groups, true);
        fail(result, request, deadlinePassed());
      }
    }
  }

  private TimeoutException deadlinePassed() {
    return new TimeoutException("Redis did not decide within " + Duration.ofNanos(deadlineNanos).toMillis() + " ms");
  }

  private static List<Acquisition> checked(List<Acquisition> acquisitions) {
    if (acquisitions == null || acquisitions.isEmpty()) {
      throw new IllegalArgumentException("acquisitions: expected at least one, got none");
    }
    return List.copyOf(acquisitions);
  }

  private Pending decide(List<Acquisition> request, List<Group> groups) {
    Long now = now();
    Pending p = new Pending(request, groups);
    CompletableFuture<?>[] replies = new CompletableFuture<?>[groups.size()];
    for (int i = 0; i < groups.size(); i++) {
      Group g = groups.get(i);
      g.reply = call(DecisionScript.ACQUIRE, now, g.acquisitions, null);
      replies[i] = g.reply;
    }
    CompletableFuture<?> all = groups.size() == 1 ? groups.get(0).reply : CompletableFuture.allOf(replies);
    all.whenComplete((ignored, error) -> {
      if (!p.settled.compareAndSet(false, true)) {
        return; // decided by the deadline; that path gives back what Redis applies late
      }
      if (error != null) {
        giveBackWhenAllowed(groups, false);
        fail(p.result, request, error);
        return;
      }
      try {
        succeeded();
        if (groups.size() == 1) {
          Group g = groups.get(0);
          p.result.complete(Decision.of(DecisionScript.outcomes(g.reply.join(), g.acquisitions)));
        } else {
          decideAcrossSlots(request, groups, p.result);
        }
      } catch (RuntimeException e) {
        fail(p.result, request, e);
      }
    });
    return p;
  }

  /** Several slots replied: merge, or give back the slots that admitted when another refused. */
  private void decideAcrossSlots(List<Acquisition> request, List<Group> groups, CompletableFuture<Decision> result) {
    PolicyOutcome[] merged = new PolicyOutcome[request.size()];
    boolean allAllowed = true;
    for (Group g : groups) {
      allAllowed &= DecisionScript.allAllowed(g.reply.join());
    }
    List<Group> toGiveBack = new ArrayList<>();
    List<CompletableFuture<long[]>> givenBack = new ArrayList<>();
    for (Group g : groups) {
      long[] reply = g.reply.join();
      List<PolicyOutcome> outcomes = DecisionScript.outcomes(reply, g.acquisitions);
      if (allAllowed || !DecisionScript.allAllowed(reply)) {
        for (int i = 0; i < outcomes.size(); i++) {
          merged[g.indexes.get(i)] = outcomes.get(i);
        }
      } else {
        toGiveBack.add(g);
        givenBack.add(call(DecisionScript.GIVE_BACK, now(), g.acquisitions, leaseIds(reply, g.acquisitions.size()))
            .completeOnTimeout(null, deadlineNanos, TimeUnit.NANOSECONDS));
      }
    }
    if (toGiveBack.isEmpty()) {
      result.complete(Decision.of(Arrays.asList(merged)));
      return;
    }
    CompletableFuture.allOf(givenBack.toArray(new CompletableFuture<?>[0])).whenComplete((ignored, error) -> {
      for (int k = 0; k < toGiveBack.size(); k++) {
        Group g = toGiveBack.get(k);
        long[] after = givenBack.get(k).isCompletedExceptionally() ? null : givenBack.get(k).join();
        List<PolicyOutcome> outcomes;
        if (after != null) {
          outcomes = DecisionScript.outcomes(after, g.acquisitions);
        } else {
          // The refund did not answer in time: report the state before the request as the
          // reservation saw it (r before = r after + cost; t as seen after).
          failures.increment();
          outcomes = new ArrayList<>();
          for (PolicyOutcome o : DecisionScript.outcomes(g.reply.join(), g.acquisitions)) {
            outcomes.add(new PolicyOutcome(o.policy(), o.key(), o.cost(), true,
                Math.min(o.policy().quota(), o.remaining() + o.cost()), o.reset().toNanos(), 0, null));
          }
        }
        for (int i = 0; i < outcomes.size(); i++) {
          merged[g.indexes.get(i)] = outcomes.get(i);
        }
      }
      result.complete(Decision.of(Arrays.asList(merged)));
    });
  }

  private List<Group> group(List<Acquisition> request) {
    if (!endpoint.cluster() || request.size() == 1) {
      Group g = new Group();
      for (int i = 0; i < request.size(); i++) {
        g.acquisitions.add(request.get(i));
        g.indexes.add(i);
      }
      return List.of(g);
    }
    Map<Integer, Group> bySlot = new LinkedHashMap<>();
    for (int i = 0; i < request.size(); i++) {
      Acquisition a = request.get(i);
      int slot = SlotHash.getSlot(layout.key(a.policy(), a.key()));
      Group g = bySlot.computeIfAbsent(slot, s -> new Group());
      g.acquisitions.add(a);
      g.indexes.add(i);
    }
    return new ArrayList<>(bySlot.values());
  }

  /**
   * For every group whose reply is (or will be) an admission that no decision used: give it back.
   * Late replies are counted in {@link #givenBackLate()}.
   */
  private void giveBackWhenAllowed(List<Group> groups, boolean late) {
    for (Group g : groups) {
      g.reply.thenAccept(reply -> {
        if (DecisionScript.allAllowed(reply)) {
          if (late) {
            givenBackLate.increment();
          }
          call(DecisionScript.GIVE_BACK, now(), g.acquisitions, leaseIds(reply, g.acquisitions.size()))
              .whenComplete((r, e) -> {
                if (e != null) {
                  failures.increment();
                  LOG.debug("Headroom could not give back a decision Redis applied late", e);
                }
              });
        }
      });
    }
  }

  private static long[] leaseIds(long[] reply, int n) {
    long[] ids = new long[n];
    for (int i = 0; i < n; i++) {
      ids[i] = DecisionScript.leaseId(reply, i);
    }
    return ids;
  }

  /** Redis could not decide: apply the failure policy to the result. */
  private void fail(CompletableFuture<Decision> result, List<Acquisition> request, Throwable cause) {
    try {
      result.complete(failed(request, cause));
    } catch (RuntimeException e) {
      result.completeExceptionally(e);
    }
  }

  /**
   * Redis could not decide: the failure policy's decision.
   *
   * @throws RedisUnavailableException with {@link FailurePolicy#FAIL_CLOSED}
   */
  private Decision failed(List<Acquisition> request, Throwable cause) {
    Throwable why = cause instanceof CompletionException && cause.getCause() != null ? cause.getCause() : cause;
    failures.increment();
    if (healthy.compareAndSet(true, false)) {
      LOG.warn("Headroom's Redis store cannot decide ({}); following {} until Redis answers again",
          why.toString(), failurePolicy);
    }
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
        return fromFallback(fallback.acquire(request));
    }
  }

  private void succeeded() {
    // Read first: a compare-and-set on every decision would make all callers write one cache line.
    if (!healthy.get() && healthy.compareAndSet(false, true)) {
      LOG.info("Headroom's Redis store decides through Redis again");
    }
  }

  /** The fallback's decision, its lease ids negated so that a release finds its way back. */
  private static Decision fromFallback(Decision d) {
    if (d.leases().isEmpty()) {
      return d;
    }
    List<PolicyOutcome> outcomes = new ArrayList<>(d.outcomes().size());
    for (PolicyOutcome o : d.outcomes()) {
      Lease lease = o.lease().map(l -> new Lease(l.policy(), l.key(), -l.id(), l.units())).orElse(null);
      outcomes.add(new PolicyOutcome(o.policy(), o.key(), o.cost(), o.allowed(), o.remaining(),
          o.reset().toNanos(), o.retryAfter().toNanos(), lease));
    }
    return Decision.of(outcomes);
  }

  @Override
  public void charge(Acquisition acquisition) {
    update(DecisionScript.CHARGE, acquisition, null, () -> fallback.charge(acquisition));
  }

  @Override
  public void refund(Acquisition acquisition) {
    update(DecisionScript.GIVE_BACK, acquisition, null, () -> fallback.refund(acquisition));
  }

  @Override
  public void release(Lease lease) {
    if (lease.id() < 0) {
      if (fallback != null) {
        fallback.release(new Lease(lease.policy(), lease.key(), -lease.id(), lease.units()));
      }
      return;
    }
    update(DecisionScript.GIVE_BACK, Acquisition.of(lease.policy(), lease.key(), lease.units()),
        new long[] {lease.id()}, () -> {});
  }

  private void update(byte[] mode, Acquisition a, long[] leaseIds, Runnable locally) {
    CompletableFuture<long[]> f = call(mode, now(), List.of(a), leaseIds);
    try {
      f.get(deadlineNanos, TimeUnit.NANOSECONDS);
      succeeded();
      return;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      LOG.debug("Headroom's Redis store could not update {}", a, e);
    }
    failures.increment();
    if (failurePolicy == FailurePolicy.FALLBACK) {
      locally.run();
    }
  }

  private Long now() {
    return ticker == null ? null : ticker.read();
  }

  /**
   * One call of the decision code: {@code FCALL} of the library's function, loading the library
   * first when Redis answers that it has no such function (a new or restarted Redis, or
   * {@code FUNCTION FLUSH}); before Redis 7, which has no {@code FCALL}, {@code EVALSHA}, and
   * {@code EVAL} when Redis answers {@code NOSCRIPT}. Either way one command in the steady state.
   */
  private CompletableFuture<long[]> call(byte[] mode, Long now, List<Acquisition> acquisitions, long[] leaseIds) {
    DecisionScript.Call call = encode(mode, now, acquisitions, leaseIds);
    RedisClusterAsyncCommands<byte[], byte[]> c = endpoint.commandsNow();
    if (c == null) {
      return endpoint.commands().thenCompose(connected -> send(connected, call));
    }
    return send(c, call);
  }

  /** The keys and arguments of a call, encoded on the calling thread (see {@link FcallArgs}). */
  private DecisionScript.Call encode(byte[] mode, Long now, List<Acquisition> acquisitions, long[] leaseIds) {
    return DecisionScript.encode(layout, endpoint.cluster(), mode, now, marginMillis, acquisitions, leaseIds);
  }

  /** The call, recovering when Redis lacks the code or {@code FCALL} (see {@link #recover}). */
  private CompletableFuture<long[]> send(RedisClusterAsyncCommands<byte[], byte[]> c, DecisionScript.Call call) {
    return sendOnce(c, call).exceptionallyCompose(e -> recover(c, call, e));
  }

  /** One command, with nothing behind it: {@code FCALL}, or {@code EVALSHA} before Redis 7. */
  private CompletableFuture<long[]> sendOnce(RedisClusterAsyncCommands<byte[], byte[]> c, DecisionScript.Call call) {
    if (functions) {
      return dispatch(c, CommandType.FCALL, functionName, call);
    }
    return dispatch(c, CommandType.EVALSHA, shaBytes, call);
  }

  private static CompletableFuture<long[]> dispatch(RedisClusterAsyncCommands<byte[], byte[]> c, CommandType type,
      byte[] head, DecisionScript.Call call) {
    try {
      return c.dispatch(type, new LongArrayOutput(), new FcallArgs(head, call)).toCompletableFuture();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * After a call failed: when Redis has no such function, the library loaded and the call made
   * again; when Redis has no {@code FCALL} (before 7), scripts from now on; when it has no such
   * script ({@code NOSCRIPT}), {@code EVAL}; otherwise the same failure.
   */
  private CompletableFuture<long[]> recover(RedisClusterAsyncCommands<byte[], byte[]> c, DecisionScript.Call call,
      Throwable e) {
    String message = message(e);
    if (message.startsWith("ERR Function not found")) {
      return loadLibrary(c).thenCompose(loaded -> dispatch(c, CommandType.FCALL, functionName, call));
    }
    if (message.toLowerCase(java.util.Locale.ROOT).contains("unknown command")
        && message.toUpperCase(java.util.Locale.ROOT).contains("FCALL")) {
      if (functions) {
        functions = false;
        LOG.info("Redis has no FCALL (before Redis 7): Headroom decides with EVALSHA");
      }
      return send(c, call);
    }
    if (isNoScript(e)) {
      return dispatch(c, CommandType.EVAL, script.evalSource(), call);
    }
    return CompletableFuture.failedFuture(e);
  }

  /**
   * Loads the library (once for all the calls that found it missing at the same time): on a
   * standalone Redis, through the connection; on a Cluster, on every primary, since each node
   * keeps its own functions (replicas receive them from their primary).
   */
  private CompletableFuture<Void> loadLibrary(RedisClusterAsyncCommands<byte[], byte[]> c) {
    CompletableFuture<Void> mine = new CompletableFuture<>();
    CompletableFuture<Void> running = loading.compareAndExchange(null, mine);
    if (running != null) {
      return running;
    }
    CompletionStage<?> load;
    try {
      if (c instanceof RedisAdvancedClusterAsyncCommands) {
        load = ((RedisAdvancedClusterAsyncCommands<byte[], byte[]>) c).upstream().commands()
            .functionLoad(script.functionSource(), true);
      } else {
        load = c.functionLoad(script.functionSource(), true);
      }
    } catch (RuntimeException e) {
      load = CompletableFuture.failedFuture(e);
    }
    load.whenComplete((ok, error) -> {
      loading.compareAndSet(mine, null);
      if (error != null) {
        mine.completeExceptionally(error);
      } else {
        mine.complete(null);
      }
    });
    return mine;
  }

  private static String message(Throwable e) {
    Throwable t = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    return t.getMessage() == null ? "" : t.getMessage();
  }

  private static boolean isNoScript(Throwable e) {
    Throwable t = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    return t instanceof RedisNoScriptException || message(e).startsWith("NOSCRIPT");
  }

  @Override
  public void close() {
    timer.shutdownNow();
    endpoint.close();
    if (ownsFallback) {
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
    private Ticker ticker;
    private boolean scriptsOnly;

    private Builder() {}

    /** Tests only: decide with EVALSHA, as before Redis 7, even when Redis has functions. */
    Builder scriptsOnly() {
      this.scriptsOnly = true;
      return this;
    }

    /**
     * A standalone Redis, as a URI ({@code redis://host:port/db}, {@code rediss://} for TLS). The
     * store owns the client: it rejects commands while disconnected (so that nothing queues up
     * to be applied after the decision was made without Redis) and reconnects by itself.
     */
    public Builder uri(String uri) {
      try {
        return uri(RedisURI.create(Objects.requireNonNull(uri, "uri")));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("uri: expected a Redis URI such as redis://127.0.0.1:6379, got '"
            + uri + "': " + e.getMessage(), e);
      }
    }

    /** A standalone Redis; see {@link #uri(String)}. */
    public Builder uri(RedisURI uri) {
      this.uri = Objects.requireNonNull(uri, "uri");
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
     * How long a decision waits for Redis before the failure policy decides instead: the most
     * latency Redis can add. From 1 ms to 1 minute; defaults to 100 ms.
     */
    public Builder decisionDeadline(Duration deadline) {
      if (deadline == null || deadline.compareTo(Duration.ofMillis(1)) < 0 || deadline.compareTo(Duration.ofMinutes(1)) > 0) {
        throw new IllegalArgumentException("decisionDeadline: expected from 1 ms to 1 minute, got " + deadline);
      }
      this.decisionDeadline = deadline;
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
        return Endpoint.opening(true, () -> connectCluster(c), () -> {});
      }
      if (uri != null) {
        RedisClient c = RedisClient.create(uri);
        c.setOptions(ClientOptions.builder()
            .autoReconnect(true)
            .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
            .socketOptions(SocketOptions.builder().connectTimeout(Duration.ofSeconds(2)).build())
            .timeoutOptions(TimeoutOptions.enabled(COMMAND_TIMEOUT))
            .build());
        RedisURI u = uri;
        return Endpoint.opening(false, () -> c.connectAsync(ByteArrayCodec.INSTANCE, u),
            () -> c.shutdown(Duration.ZERO, Duration.ofSeconds(2)));
      }
      RedisClusterClient c = RedisClusterClient.create(clusterUris);
      c.setOptions(ClusterClientOptions.builder()
          .autoReconnect(true)
          .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
          .socketOptions(SocketOptions.builder().connectTimeout(Duration.ofSeconds(2)).build())
          .timeoutOptions(TimeoutOptions.enabled(COMMAND_TIMEOUT))
          .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
              .enablePeriodicRefresh(Duration.ofSeconds(2))
              .enableAllAdaptiveRefreshTriggers()
              .build())
          .build());
      return Endpoint.opening(true, () -> connectCluster(c), () -> c.shutdown(Duration.ZERO, Duration.ofSeconds(2)));
    }

    /** Lettuce connects to a Cluster asynchronously only once it has read the topology. */
    private static CompletionStage<StatefulRedisClusterConnection<byte[], byte[]>> connectCluster(RedisClusterClient c) {
      return c.refreshPartitionsAsync().thenCompose(ignored -> c.connectAsync(ByteArrayCodec.INSTANCE));
    }
  }
}
