package dev.headroom.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.InMemoryStore;
import dev.headroom.ManualTicker;
import dev.headroom.PartitionKey;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.redis.internal.DecisionCalls;
import dev.headroom.redis.internal.DecisionScript;
import dev.headroom.redis.internal.Endpoint;
import dev.headroom.redis.internal.KeyLayout;
import dev.headroom.redis.internal.WriteStamp;
import io.lettuce.core.RedisURI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Concurrent decisions on one key set are coalesced into one {@code FCALL} (issue 17, item 2)
 * and stay exact: each is decided as it would have been alone.
 */
class CoalescingTest {

  private String prefix;

  @AfterEach
  void clean() {
    if (prefix != null) {
      LocalRedis.deleteAll(prefix);
    }
  }

  /**
   * Many callers on one key, on a Redis of the test's own: exactly the quota is admitted, and
   * Redis counted fewer FCALLs than decisions (INFO commandstats), so some were decided together.
   */
  @Test
  void concurrentDecisionsOnOneKeyAreExactAndCoalesced() throws Exception {
    int quota = 100;
    int callers = 32;
    int each = 25;
    QuotaPolicy hourly = hourly(quota);
    PartitionKey key = PartitionKey.of("hot");
    try (RedisServer server = RedisServer.launch(); RedisStore store = patient(server)) {
      QuotaLimiter limiter = QuotaLimiter.of(store);
      AtomicInteger admitted = new AtomicInteger();
      if (limiter.tryAcquire(hourly, key)) { // connects and loads the library
        admitted.incrementAndGet();
      }
      long before = server.fcalls();
      CountDownLatch start = new CountDownLatch(1);
      AtomicReference<Throwable> failure = new AtomicReference<>();
      List<Thread> threads = new ArrayList<>();
      for (int t = 0; t < callers; t++) {
        Thread thread = new Thread(() -> {
          try {
            start.await();
            for (int i = 0; i < each; i++) {
              if (limiter.tryAcquire(hourly, key)) {
                admitted.incrementAndGet();
              }
            }
          } catch (Throwable e) {
            failure.compareAndSet(null, e);
          }
        });
        thread.start();
        threads.add(thread);
      }
      start.countDown();
      for (Thread thread : threads) {
        thread.join(TimeUnit.MINUTES.toMillis(2));
      }
      assertThat(failure.get()).isNull();
      int decisions = callers * each;
      assertThat(admitted.get()).as("admitted of %d decisions", decisions + 1).isEqualTo(quota);
      long calls = server.fcalls() - before;
      assertThat(calls).as("FCALLs for %d concurrent decisions", decisions).isPositive().isLessThan(decisions);
      assertThat(store.failures()).isZero();
    }
  }

  /**
   * Asynchronous decisions (the gateway's path) are coalesced too: 800 asked at once on one key
   * of a Redis of the test's own admit exactly the quota, in fewer FCALLs than decisions.
   */
  @Test
  void asynchronousDecisionsOnOneKeyAreExactAndCoalesced() throws Exception {
    int quota = 100;
    int decisions = 800;
    QuotaPolicy hourly = hourly(quota);
    PartitionKey key = PartitionKey.of("hot-async");
    try (RedisServer server = RedisServer.launch(); RedisStore store = patient(server)) {
      int admitted = store.acquire(List.of(Acquisition.of(hourly, key))).allowed() ? 1 : 0; // loads the library
      long before = server.fcalls();
      List<CompletableFuture<Decision>> replies = new ArrayList<>();
      for (int i = 0; i < decisions; i++) {
        replies.add(store.acquireAsync(List.of(Acquisition.of(hourly, key))).toCompletableFuture());
      }
      for (CompletableFuture<Decision> r : replies) {
        if (r.get(2, TimeUnit.MINUTES).allowed()) {
          admitted++;
        }
      }
      assertThat(admitted).as("admitted of %d decisions", decisions + 1).isEqualTo(quota);
      long calls = server.fcalls() - before;
      assertThat(calls).as("FCALLs for %d concurrent decisions", decisions).isPositive().isLessThan(decisions / 2);
      assertThat(store.failures()).isZero();
    }
  }

  /**
   * The batch mode of the Lua code against the in-memory store: random batches of requests on
   * one key set (token bucket, windows, concurrency; costs from zero to beyond the quota, debt)
   * decided by one call give, in order, the decisions the in-memory store makes one by one.
   */
  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {21, 22, 23, 24, 25, 26})
  void aBatchDecidesAsTheInMemoryStoreDoesOneByOne(long seed) throws Exception {
    batchesAgainstTheInMemoryStore(seed, false);
  }

  /**
   * Mode m (a standalone Redis: one call deciding requests on any keys) against the in-memory
   * store: random batches whose requests each pick their own policies and partitions (token
   * bucket, windows, concurrency; costs from zero to beyond the quota, repeats after refusals)
   * decided by one call give, in order, the decisions the in-memory store makes one by one.
   */
  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {41, 42, 43, 44, 45, 46})
  void aBatchAcrossKeysDecidesAsTheInMemoryStoreDoesOneByOne(long seed) throws Exception {
    batchesAgainstTheInMemoryStore(seed, true);
  }

  /**
   * 30 random batches of up to 60 requests, each batch one call (mode b on one key set, or mode
   * m with each request on keys of its own choosing), against the in-memory store one by one.
   */
  private void batchesAgainstTheInMemoryStore(long seed, boolean across) throws Exception {
    Random r = new Random(seed);
    ManualTicker ticker = randomInstant(r);
    prefix = LocalRedis.uniquePrefix((across ? "across" : "batch") + seed);
    List<QuotaPolicy> policies = DifferentialTest.policies(r);
    KeyLayout layout = new KeyLayout(prefix);
    Endpoint endpoint = localRedis();
    DecisionCalls calls = new DecisionCalls(endpoint, DecisionScript.load(), false);
    try (InMemoryStore memory = InMemoryStore.builder().ticker(ticker).build()) {
      for (int round = 0; round < 30; round++) {
        List<Acquisition> chosen = choose(r, policies, KEYS);
        int n = 1 + r.nextInt(across ? 60 : 40);
        List<List<Acquisition>> requests = new ArrayList<>();
        List<DecisionScript.Call> encoded = new ArrayList<>();
        for (int j = 0; j < n; j++) {
          if (j > 0 && r.nextInt(3) == 0) {
            // the same request again: after a refusal, the batch answers it without evaluating it
            requests.add(requests.get(j - 1));
            encoded.add(encoded.get(j - 1));
            continue;
          }
          List<Acquisition> request = costed(r, across ? choose(r, policies, KEYS) : chosen);
          requests.add(request);
          encoded.add(DecisionScript.encode(layout, false, DecisionScript.ACQUIRE, ticker.read(),
              RedisStore.TEST_TTL_MARGIN_MILLIS, request, null));
        }
        DecisionScript.Call one = across ? DecisionScript.across(encoded) : DecisionScript.batch(encoded);
        long[] reply = calls.call(one, new WriteStamp(System.nanoTime())).get(30, TimeUnit.SECONDS);
        long[][] replies = DecisionScript.split(reply, n);
        for (int j = 0; j < n; j++) {
          Decision m = memory.acquire(requests.get(j));
          Decision d = Decision.of(DecisionScript.outcomes(replies[j], requests.get(j)));
          DifferentialTest.assertSame("seed " + seed + " round " + round + " request " + j + " "
              + requests.get(j), m, d);
        }
        ticker.advanceNanos((long) (r.nextDouble() * 2_000_000_000L));
      }
    } finally {
      endpoint.close();
    }
  }

  /**
   * Mode m sends each distinct argument list once (decideAcross): 40 requests of one policy on
   * Redis TIME and 40 of another, interleaved, each on a key of its own or again on the key before
   * it, are two lists and one index per request on the wire, and each is decided as alone: the
   * first on a key admitted with the quota less one left, a second in a row on the same key
   * refused (quota 1, Retry-After about the hour) or admitted with one less (quota 5).
   */
  @Test
  void requestsThatDifferOnlyInTheirKeysShareOneArgumentList() throws Exception {
    prefix = LocalRedis.uniquePrefix("lists");
    KeyLayout layout = new KeyLayout(prefix);
    QuotaPolicy one = QuotaPolicy.builder("one").quota(1).window(Duration.ofHours(1)).build();
    QuotaPolicy five = QuotaPolicy.builder("five").algorithm(Algorithm.FIXED_WINDOW).quota(5)
        .window(Duration.ofHours(1)).build();
    List<List<Acquisition>> requests = new ArrayList<>();
    List<DecisionScript.Call> encoded = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      for (QuotaPolicy p : List.of(one, five)) {
        List<Acquisition> request = List.of(Acquisition.of(p, PartitionKey.of("k" + i)));
        int copies = i % 4 == 0 ? 2 : 1; // a second request in a row on the same key
        for (int c = 0; c < copies; c++) {
          requests.add(request);
          encoded.add(DecisionScript.encode(layout, false, DecisionScript.ACQUIRE, null, 0, request, null));
        }
      }
    }
    DecisionScript.Call across = DecisionScript.across(encoded);
    int n = encoded.size();
    int own = encoded.get(0).arguments() - 1 - 1; // one list's ARGV
    assertThat(across.arguments()).as("numkeys, %d keys, m n u, two lists, %d indexes", n, n)
        .isEqualTo(1 + n + 3 + 2 * (2 + own) + n);
    Endpoint endpoint = localRedis();
    try {
      DecisionCalls calls = new DecisionCalls(endpoint, DecisionScript.load(), false);
      long[][] replies = DecisionScript.split(calls.call(across, new WriteStamp(System.nanoTime()))
          .get(30, TimeUnit.SECONDS), n);
      PartitionKey last = null;
      QuotaPolicy lastPolicy = null;
      for (int j = 0; j < n; j++) {
        Acquisition a = requests.get(j).get(0);
        Decision d = Decision.of(DecisionScript.outcomes(replies[j], requests.get(j)));
        boolean again = a.key().equals(last) && a.policy().equals(lastPolicy);
        if (again && a.policy() == one) {
          assertThat(d.allowed()).as("request %d, the second on %s", j, a.key()).isFalse();
          assertThat(d.outcomes().get(0).retryAfterSeconds()).as("request %d: retry after (s)", j)
              .isBetween(3_500L, 3_600L);
        } else {
          assertThat(d.allowed()).as("request %d on %s", j, a.key()).isTrue();
          assertThat(d.outcomes().get(0).remaining()).as("request %d", j)
              .isEqualTo(a.policy().quota() - (again ? 2 : 1));
        }
        last = a.key();
        lastPolicy = a.policy();
      }
    } finally {
      endpoint.close();
    }
  }

  /**
   * Mode m with one argument list (a busy route, every request one token bucket on Redis TIME)
   * carries no index per request: numkeys, the keys, m n u, the list. Each request is decided as
   * alone (the script's fast path, short replies), 2 per hour (T = 30 min, tau = 1 h): on a key,
   * the first is admitted with r = 1, t = 30 min, the second with r = 0, t = 1 h, the third refused
   * with Retry-After 30 min, and a fourth in a row answered as the third without being evaluated
   * again; a key that comes back after another key reads what the batch wrote to it.
   */
  @Test
  void requestsOfOneArgumentListCarryNoIndexes() throws Exception {
    prefix = LocalRedis.uniquePrefix("onelist");
    KeyLayout layout = new KeyLayout(prefix);
    QuotaPolicy hourly = QuotaPolicy.builder("hourly").quota(2).window(Duration.ofHours(1)).build();
    String[] keys = {"a", "b", "b", "b", "b", "c", "a", "a"};
    List<DecisionScript.Call> encoded = new ArrayList<>();
    for (String k : keys) {
      encoded.add(DecisionScript.encode(layout, false, DecisionScript.ACQUIRE, null, 0,
          List.of(Acquisition.of(hourly, PartitionKey.of(k))), null));
    }
    DecisionScript.Call across = DecisionScript.across(encoded);
    int n = keys.length;
    int own = encoded.get(0).arguments() - 1 - 1;
    assertThat(across.arguments()).as("numkeys, %d keys, m n u, one list", n).isEqualTo(1 + n + 3 + 2 + own);
    Endpoint endpoint = localRedis();
    try {
      DecisionCalls calls = new DecisionCalls(endpoint, DecisionScript.load(), false);
      long[][] replies = DecisionScript.split(calls.call(across, new WriteStamp(System.nanoTime()))
          .get(30, TimeUnit.SECONDS), n);
      boolean[] allowed = {true, true, true, false, false, true, true, false};
      long[] remaining = {1, 1, 0, 0, 0, 1, 0, 0};
      long half = Duration.ofMinutes(30).toNanos(); // T = w / q
      for (int j = 0; j < n; j++) {
        Decision d = Decision.of(DecisionScript.outcomes(replies[j],
            List.of(Acquisition.of(hourly, PartitionKey.of(keys[j])))));
        PolicyOutcome o = d.outcomes().get(0);
        assertThat(d.allowed()).as("request %d on %s", j, keys[j]).isEqualTo(allowed[j]);
        assertThat(o.remaining()).as("request %d: r", j).isEqualTo(remaining[j]);
        long t = o.reset().toNanos();
        assertThat(t).as("request %d: t", j).isEqualTo(remaining[j] == 1 ? half : 2 * half);
        if (!allowed[j]) {
          assertThat(o.retryAfter().toNanos()).as("request %d: Retry-After", j).isEqualTo(half);
        }
      }
      assertThat(replies[4]).as("the third on b repeats the second").isEqualTo(replies[3]);
    } finally {
      endpoint.close();
    }
  }

  /**
   * Concurrent decisions on many different keys, through the store on a standalone Redis of the
   * test's own, share calls (mode m): each key admits exactly its quota, in fewer FCALLs than
   * decisions.
   */
  @Test
  void concurrentDecisionsOnDifferentKeysShareCallsAndStayExact() throws Exception {
    int keys = 50;
    int quota = 3;
    QuotaPolicy hourly = hourly(quota);
    try (RedisServer server = RedisServer.launch(); RedisStore store = patient(server)) {
      store.acquire(List.of(Acquisition.of(hourly, PartitionKey.of("warm")))); // loads the library
      long before = server.fcalls();
      List<CompletableFuture<Decision>> replies = new ArrayList<>();
      for (int round = 0; round < quota + 2; round++) {
        for (int k = 0; k < keys; k++) {
          replies.add(store.acquireAsync(List.of(Acquisition.of(hourly, PartitionKey.of("k" + k)))).toCompletableFuture());
        }
      }
      int[] admitted = new int[keys];
      for (int i = 0; i < replies.size(); i++) {
        if (replies.get(i).get(2, TimeUnit.MINUTES).allowed()) {
          admitted[i % keys]++;
        }
      }
      for (int k = 0; k < keys; k++) {
        assertThat(admitted[k]).as("admitted on key k%d", k).isEqualTo(quota);
      }
      assertThat(server.fcalls() - before).as("FCALLs for %d decisions on %d keys", replies.size(), keys)
          .isPositive().isLessThan(replies.size() / 4);
      assertThat(store.failures()).isZero();
    }
  }

  /**
   * The two calls a standalone Redis may have in flight carry equal shares of what waits
   * ({@code Coalescer.Lane#next}). Redis is held ({@code CLIENT PAUSE}) while two decisions go out
   * alone and 60 more on other keys queue behind them; when the first is answered the queue goes
   * out in two calls of about 30, not one of 60 beside the one of 1 still in flight, which the
   * callers' next decisions would keep at 60 and 1. Redis's slow log (every command logged) gives
   * each call's key count.
   */
  @Test
  void whatQueuesIsSharedBetweenTheCallsInFlight() throws Exception {
    int queued = 60;
    QuotaPolicy hourly = hourly(5);
    try (RedisServer server = RedisServer.launch(); RedisStore store = patient(server)) {
      store.acquire(List.of(Acquisition.of(hourly, PartitionKey.of("warm")))); // loads the library
      assertThat(server.command("CONFIG SET slowlog-log-slower-than 0")).isEqualTo("+OK");
      assertThat(server.command("CONFIG SET slowlog-max-len 1024")).isEqualTo("+OK");
      assertThat(server.command("SLOWLOG RESET")).isEqualTo("+OK");
      assertThat(server.command("CLIENT PAUSE 3000 ALL")).isEqualTo("+OK");
      List<CompletableFuture<Decision>> replies = new ArrayList<>();
      for (int k = 0; k < 2 + queued; k++) {
        replies.add(store.acquireAsync(List.of(Acquisition.of(hourly, PartitionKey.of("k" + k)))).toCompletableFuture());
      }
      assertThat(replies).as("decided while Redis was held").noneMatch(CompletableFuture::isDone);
      for (CompletableFuture<Decision> reply : replies) {
        assertThat(reply.get(2, TimeUnit.MINUTES).allowed()).isTrue();
      }
      List<Integer> keysPerCall = server.fcallKeyCounts();
      assertThat(keysPerCall).as("FCALLs, each as its number of keys").hasSize(4);
      int one = keysPerCall.get(0);
      assertThat(keysPerCall.get(1)).as("the second decision's call alone").isEqualTo(one);
      assertThat(keysPerCall.get(2) + keysPerCall.get(3)).as("the queued decisions' calls").isEqualTo(queued * one);
      assertThat(keysPerCall.get(2)).as("the first of them").isBetween(30 * one, 31 * one);
      assertThat(store.failures()).isZero();
    }
  }

  /**
   * Mode n (n copies of one request, evaluated until the first refusal) against two references:
   * the in-memory store deciding the copies one by one, and Redis deciding them one call each on
   * keys of their own. Random policies (token bucket, windows, concurrency, several at once),
   * costs from zero to beyond the quota, up to 300 copies: every copy's decision is the same.
   */
  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {31, 32, 33, 34, 35, 36})
  void copiesOfOneRequestAreDecidedAsOneByOne(long seed) throws Exception {
    copiesDecidedAsOneByOne(seed, false);
  }

  /**
   * Mode n on one token bucket, the hot route's case, which the script decides with the TAT
   * carried from copy to copy and written once: the same decisions as one by one, and the key
   * left holding exactly what the calls one by one leave in theirs.
   */
  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {41, 42, 43, 44})
  void copiesOfOneTokenBucketRequestLeaveTheStateOneByOneLeaves(long seed) throws Exception {
    copiesDecidedAsOneByOne(seed, true);
  }

  private void copiesDecidedAsOneByOne(long seed, boolean oneTokenBucket) throws Exception {
    Random r = new Random(seed);
    ManualTicker ticker = randomInstant(r);
    prefix = LocalRedis.uniquePrefix("repeat" + seed);
    List<QuotaPolicy> policies = DifferentialTest.policies(r);
    KeyLayout layout = new KeyLayout(prefix);
    KeyLayout alone = new KeyLayout(prefix + "alone:");
    Endpoint endpoint = localRedis();
    DecisionCalls calls = new DecisionCalls(endpoint, DecisionScript.load(), false);
    List<QuotaPolicy> buckets = policies.stream().filter(p -> p.algorithm() == Algorithm.TOKEN_BUCKET).toList();
    int evaluatedLess = 0;
    int carried = 0;
    try (InMemoryStore memory = InMemoryStore.builder().ticker(ticker).build()) {
      for (int round = 0; round < 25; round++) {
        List<Acquisition> request = oneTokenBucket
            ? costed(r, List.of(Acquisition.of(buckets.get(r.nextInt(buckets.size())), KEYS[r.nextInt(KEYS.length)], 0)))
            : costed(r, choose(r, policies, KEYS));
        int n = 1 + r.nextInt(r.nextBoolean() ? 12 : 300);
        DecisionScript.Call call = DecisionScript.encode(layout, false, DecisionScript.ACQUIRE, ticker.read(),
            RedisStore.TEST_TTL_MARGIN_MILLIS, request, null);
        long[] reply = calls.call(DecisionScript.repeat(call, n), new WriteStamp(System.nanoTime()))
            .get(30, TimeUnit.SECONDS);
        if (reply[0] < n) {
          evaluatedLess++;
        }
        if (reply[0] >= 2) {
          carried++;
        }
        long[][] replies = DecisionScript.splitRepeat(reply, n);
        DecisionScript.Call single = DecisionScript.encode(alone, false, DecisionScript.ACQUIRE, ticker.read(),
            RedisStore.TEST_TTL_MARGIN_MILLIS, request, null);
        for (int j = 0; j < n; j++) {
          String what = "seed " + seed + " round " + round + " copy " + j + " of " + n + " " + request;
          Decision d = Decision.of(DecisionScript.outcomes(replies[j], request));
          DifferentialTest.assertSame(what, memory.acquire(request), d);
          long[] own = calls.call(single, new WriteStamp(System.nanoTime())).get(30, TimeUnit.SECONDS);
          DifferentialTest.assertSame(what + " (one call each)", Decision.of(DecisionScript.outcomes(own, request)), d);
        }
        if (oneTokenBucket) {
          Acquisition a = request.get(0);
          String state = LocalRedis.commands().get(new String(layout.key(a.policy(), a.key()), StandardCharsets.UTF_8));
          assertThat(state).as("seed %d round %d: the bucket's state after %d copies", seed, round, n)
              .isEqualTo(LocalRedis.commands().get(new String(alone.key(a.policy(), a.key()), StandardCharsets.UTF_8)));
        }
        ticker.advanceNanos((long) (r.nextDouble() * 2_000_000_000L));
      }
    } finally {
      endpoint.close();
    }
    assertThat(evaluatedLess).as("rounds in which Redis stopped at a refusal").isPositive();
    assertThat(carried).as("rounds in which Redis decided two copies or more").isPositive();
  }

  private static QuotaPolicy hourly(int quota) {
    return QuotaPolicy.builder("hourly").quota(quota).window(Duration.ofHours(1)).build();
  }

  /** A store on the test's own Redis whose deadlines a busy test machine never reaches. */
  private static RedisStore patient(RedisServer server) {
    return RedisStore.builder().uri(server.uri()).decisionDeadline(Duration.ofSeconds(10))
        .writeTimeout(Duration.ofSeconds(30)).build();
  }

  /** Partitions of every shape: the global one, a plain one, one with a brace and a percent sign. */
  private static final PartitionKey[] KEYS = {PartitionKey.GLOBAL, PartitionKey.of("a"), PartitionKey.of("b{c}%")};

  private static ManualTicker randomInstant(Random r) {
    return ManualTicker.atFixedInstant().advanceNanos((long) (r.nextDouble() * 1e15));
  }

  private static Endpoint localRedis() {
    return Endpoint.owned(RedisURI.create(LocalRedis.URI), Duration.ofSeconds(10));
  }

  /** One to three distinct policy and key pairs (costs not chosen yet). */
  private static List<Acquisition> choose(Random r, List<QuotaPolicy> policies, PartitionKey[] keys) {
    List<Acquisition> chosen = new ArrayList<>();
    List<String> seen = new ArrayList<>();
    for (int i = 0, n = 1 + r.nextInt(3); i < n; i++) {
      QuotaPolicy p = policies.get(r.nextInt(policies.size()));
      PartitionKey k = keys[r.nextInt(keys.length)];
      if (!seen.contains(p.name() + k)) {
        seen.add(p.name() + k);
        chosen.add(Acquisition.of(p, k, 0));
      }
    }
    return chosen;
  }

  /** A request on the chosen pairs with random costs (zero to beyond the quota; 0 to 2 leases). */
  private static List<Acquisition> costed(Random r, List<Acquisition> chosen) {
    List<Acquisition> request = new ArrayList<>();
    for (Acquisition a : chosen) {
      QuotaPolicy p = a.policy();
      request.add(Acquisition.of(p, a.key(),
          p.algorithm() == Algorithm.CONCURRENCY ? r.nextInt(3) : DifferentialTest.cost(r, p)));
    }
    return request;
  }

  /** A repeat reply is m replies then the m-th for the rest; anything else is refused. */
  @Test
  void aRepeatReplyIsSpreadToEveryCopy() {
    assertThat(DecisionScript.splitRepeat(new long[] {2, 1, 7, 2, 0, 9}, 4))
        .isDeepEqualTo(new long[][] {{7}, {0, 9}, {0, 9}, {0, 9}});
    Assertions.assertThatThrownBy(() -> DecisionScript.splitRepeat(new long[] {5, 1, 7}, 4))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("expected a count from 1 to 4, got 5");
    Assertions.assertThatThrownBy(() -> DecisionScript.splitRepeat(new long[0], 4))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("got nothing");
  }

  /**
   * A batch's short replies to one token bucket (the script's fast path): -1, r, t in nanoseconds
   * (admitted) and -2, r, t, Retry-After in nanoseconds (refused) read as a single call's reply,
   * between length-prefixed ones; a short form cut off, or another negative length, is refused.
   */
  @Test
  void shortTokenBucketRepliesReadAsFullOnes() {
    long[] reply = {-1, 4, 1_250_000_000L, 2, 7, 8, -2, 0, 3_000_000_001L, 999_999_999L};
    assertThat(DecisionScript.split(reply, 3)).isDeepEqualTo(new long[][] {
        {1, 1, 4, 1, 250_000_000L, 0, 0, 0, 1, 250_000_000L}, {7, 8},
        {0, 0, 0, 3, 1, 0, 999_999_999L, 0, 3, 1}});
    assertThat(DecisionScript.splitRepeat(new long[] {1, -1, 0, 5}, 3)).isDeepEqualTo(new long[][] {
        {1, 1, 0, 0, 5, 0, 0, 0, 0, 5}, {1, 1, 0, 0, 5, 0, 0, 0, 0, 5}, {1, 1, 0, 0, 5, 0, 0, 0, 0, 5}});
    Assertions.assertThatThrownBy(() -> DecisionScript.split(new long[] {-2, 0, 5}, 1))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("expected 1 length-prefixed replies");
    Assertions.assertThatThrownBy(() -> DecisionScript.split(new long[] {-3, 0, 5, 6}, 1))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("expected 1 length-prefixed replies");
  }

  /** A reply that is not n length-prefixed replies is refused, naming what was expected. */
  @Test
  void aMalformedBatchReplyIsRefused() {
    assertThat(DecisionScript.split(new long[] {1, 7, 2, 8, 9}, 2)).isDeepEqualTo(new long[][] {{7}, {8, 9}});
    Assertions.assertThatThrownBy(() -> DecisionScript.split(new long[] {5, 1}, 1))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("expected 1 length-prefixed replies");
    Assertions.assertThatThrownBy(() -> DecisionScript.split(new long[] {1, 7, 0}, 1))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("expected 1 replies");
  }
}
