package dev.headroom.redis.internal;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.Lease;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaPolicy;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The Lua code {@code headroom.lua} and its calling convention.
 *
 * <p>The code defines the algorithms and one entry point, {@code decide(keys, argv)}. It is sent
 * in two forms. On Redis 7 and later, as a function library ({@link #functionSource()}): loaded
 * once with {@code FUNCTION LOAD}, its definitions are made once, and each decision is one
 * {@code FCALL} of {@link #function()} that runs only the code of that decision. Before Redis 7,
 * as a script ({@link #evalSource()}, {@code EVALSHA} by {@link #sha()}), whose whole body, every
 * definition included, runs on every call. The library and function are named after the code's
 * SHA-1, so that nodes of two Headroom versions sharing one Redis during an upgrade each call
 * their own code and never replace the other's.
 *
 * <pre>
 *   KEYS   per acquisition: its key, and for concurrency its lease hash (see {@link KeyLayout})
 *   ARGV   1 mode: a = acquire all or nothing, c = charge, r = give back (refund or release)
 *          2, 3 the time as seconds and nanoseconds since the epoch (test ticker), or empty to
 *               read Redis TIME
 *          4 milliseconds added to every TTL (0; one hour with a test ticker, whose time is not
 *            the time Redis expires keys by)
 *          then 8 per acquisition: algorithm (g, f, s, c), q, cost, and
 *            token bucket: T seconds, T nanos, tau seconds, tau nanos, w seconds
 *            fixed / sliding window: w seconds, 0, 0, 0, 0
 *            concurrency: lease timeout seconds, nanos, 0, 0, lease id (mode r)
 *   reply  modes a and r: flag (all allowed), then 9 integers per acquisition: allowed, r,
 *          t seconds, t nanos, retry-after seconds, retry-after nanos, lease id, next seconds,
 *          next nanos (t is draft-09's, until the quota resets; next is draft-10's and -11's
 *          t, until more quota is available: computed by the script for the windows, sent as
 *          t for a token bucket and a concurrency policy, see {@link #outcomes})
 *   batch  ARGV 1 b, 2 n, then per call its ARGV's length and its ARGV (same KEYS for all); the
 *          calls are decided in order, each as alone; reply: per call its reply's length, then it
 *   across ARGV 1 m, 2 n, 3 u, then u distinct argument lists, each as its number of keys, its
 *          length and its ARGV, then, when u > 1, per call the index (from 1) of its list; KEYS
 *          every call's keys in order (standalone Redis only: the keys may lie in any slot);
 *          decided and answered as a batch
 *   repeat ARGV 1 n, 2 n, then one acquisition's ARGV: n copies of it, decided as a batch of them;
 *          evaluation stops at the first refusal (a refusal changes nothing, so the copies after
 *          it would be refused alike); reply: m, then m replies after their lengths
 *   short  in the replies of across and repeat, one token-bucket acquisition decided on the fast
 *          path (every duration below 2^53 ns) comes as -1, r, t nanos (admitted) or -2, r,
 *          t nanos, retry-after nanos (refused) instead of its length and reply ({@link #split})
 * </pre>
 *
 * Policy constants that need division ({@code T = ceil(w / q)}, {@code tau = q * T}) are computed
 * in Java longs by {@link dev.headroom.QuotaPolicy#emissionIntervalNanos()} and
 * {@link dev.headroom.QuotaPolicy#burstToleranceNanos()}, so that the script only adds, multiplies
 * and compares.
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
 * Times saturate at {@code Long.MAX_VALUE} as in the core. Two differences from the in-memory
 * store remain, both in debt no real charge reaches. Window counters saturate at 2^53 units
 * instead of 2^63: a window charged beyond 2^53 units (about nine of the largest quota) forgets
 * the rest of its debt, so its Retry-After and time until more quota, and a fixed window's reset,
 * come earlier. And where a token bucket's TAT has saturated (a debt reaching past the year 2262),
 * its time until more quota, derived from the reset, is one emission interval later (the
 * in-memory store's is then cut short by the saturation).
 *
 * <p>Immutable and thread-safe.
 */
public final class DecisionScript {

  public static final byte[] ACQUIRE = {'a'};
  public static final byte[] CHARGE = {'c'};
  public static final byte[] GIVE_BACK = {'r'};

  /** Fields per acquisition in a reply. */
  static final int FIELDS = 9;

  private static final long E9 = 1_000_000_000L;
  private static final byte[] EMPTY = new byte[0];
  private static final byte[] ZERO = {'0'};
  private static final byte[] EMPTY_BULK = {'$', '0', '\r', '\n', '\r', '\n'};
  private static final ConcurrentHashMap<QuotaPolicy, Encoded> CONSTANTS =
      new ConcurrentHashMap<>();

  private final byte[] evalSource;
  private final String sha;
  private final String function;
  private final String functionSource;

  private DecisionScript(byte[] code) {
    String text = new String(code, StandardCharsets.UTF_8);
    this.function = "headroom_" + sha1Hex(code).substring(0, 16);
    this.functionSource = "#!lua name=" + function + "\n" + text + "\nredis.register_function('" + function
        + "', decide)\n";
    // Before Redis 5, a script must ask for effects replication to write after reading TIME.
    this.evalSource = ("if redis.replicate_commands then redis.replicate_commands() end\n" + text
        + "\nreturn decide(KEYS, ARGV)\n").getBytes(StandardCharsets.UTF_8);
    this.sha = sha1Hex(evalSource);
  }

  /** The script shipped in this jar. */
  public static DecisionScript load() {
    try (InputStream in = DecisionScript.class.getResourceAsStream("/dev/headroom/redis/headroom.lua")) {
      if (in == null) {
        throw new IllegalStateException("headroom.lua is missing from the classpath");
      }
      return new DecisionScript(in.readAllBytes());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The script form, for {@code EVAL}. */
  public byte[] evalSource() {
    return evalSource;
  }

  /** The SHA-1 that {@code EVALSHA} names the script form by. */
  public String sha() {
    return sha;
  }

  /** The library form, for {@code FUNCTION LOAD}. */
  public String functionSource() {
    return functionSource;
  }

  /** The name of the library and of its one function, for {@code FCALL}. */
  public String function() {
    return function;
  }

  /**
   * One call's numkeys, keys and arguments, encoded as RESP bulk strings (see {@link FcallArgs}).
   *
   * @param encoded the bulk strings
   * @param arguments how many there are
   * @param firstKey the first key, for a Cluster connection to route the call by; null when the
   *     connection is standalone
   * @param keysEnd where the arguments after numkeys and the keys start in {@code encoded}
   * @param keyCount how many keys there are
   * @param rememberable whether a refusal of this call may be remembered ({@link RefusalMemory}):
   *     an acquisition on Redis {@code TIME}, with no concurrency policy
   * @param admits whether the call decides acquisitions, whose admissions replicas must
   *     acknowledge when the store asks for it ({@link ReplicaAcknowledgement}); charges and
   *     give-backs do not
   */
  public record Call(byte[] encoded, int arguments, byte[] firstKey, int keysEnd, int keyCount, boolean rememberable,
      boolean admits) {

    /** A call whose refusal is not remembered (batches, repeats). */
    public Call(byte[] encoded, int arguments, byte[] firstKey, int keysEnd, int keyCount, boolean admits) {
      this(encoded, arguments, firstKey, keysEnd, keyCount, false, admits);
    }

    /** Numkeys and the keys, encoded: calls with equal ones may be decided in one batch. */
    public ByteBuffer keys() {
      return ByteBuffer.wrap(encoded, 0, keysEnd);
    }
  }

  /** Mode {@code b}: a batch of calls on the same keys. */
  static final byte[] BATCH = {'b'};

  /**
   * One call deciding these calls, which have the same keys, one after another in order (mode
   * {@code b}: ARGV is {@code b}, n, then each call's arguments after their count). The reply is
   * each call's reply after its length; {@link #split} takes it apart.
   */
  public static Call batch(List<Call> calls) {
    Call first = calls.get(0);
    int size = first.keysEnd + 32;
    for (Call c : calls) {
      size += c.encoded.length - c.keysEnd + 16;
    }
    Resp r = new Resp(size);
    r.raw(first.encoded, 0, first.keysEnd).bulk(BATCH).bulk(calls.size());
    int arguments = 1 + first.keyCount + 2;
    for (Call c : calls) {
      int own = c.arguments - 1 - c.keyCount;
      r.bulk(own).raw(c.encoded, c.keysEnd, c.encoded.length - c.keysEnd);
      arguments += 1 + own;
    }
    return new Call(r.toBytes(), arguments, first.firstKey, first.keysEnd, first.keyCount, first.admits);
  }

  /** Mode {@code m}: a batch of calls on any keys (standalone Redis). */
  static final byte[] ACROSS = {'m'};

  /**
   * One call deciding these calls, on any keys, one after another in order (mode {@code m}): for
   * a standalone Redis, where one call may touch keys of any slot. Calls whose arguments are equal
   * (a route's requests differ only in their keys) share one argument list, sent once: each call
   * is then one key and one index on the wire, and the script parses each list once. The reply is
   * {@link #batch}'s; {@link #split} takes it apart.
   */
  public static Call across(List<Call> calls) {
    int keyCount = 0;
    for (Call c : calls) {
      keyCount += c.keyCount;
    }
    Map<ByteBuffer, Integer> index = null;
    List<Call> lists = new ArrayList<>();
    int[] listOf = new int[calls.size()];
    int at = 0;
    for (int i = 0; i < calls.size(); i++) {
      Call c = calls.get(i);
      if (at > 0 && sameArguments(lists.get(at - 1), c)) {
        listOf[i] = at; // the list of the call before (a busy route's requests come in runs)
        continue;
      }
      if (index == null) {
        index = new HashMap<>();
      }
      ByteBuffer own = ByteBuffer.wrap(c.encoded, c.keysEnd, c.encoded.length - c.keysEnd);
      Integer known = index.get(own);
      if (known == null || lists.get(known - 1).keyCount != c.keyCount) {
        lists.add(c);
        known = lists.size();
        index.put(own, known);
      }
      at = known;
      listOf[i] = at;
    }
    Resp r = Resp.scratch();
    r.bulk(keyCount);
    for (Call c : calls) {
      int start = keysStart(c);
      r.raw(c.encoded, start, c.keysEnd - start);
    }
    int keysEnd = r.size();
    r.bulk(ACROSS).bulk(calls.size()).bulk(lists.size());
    int arguments = 1 + keyCount + 3;
    for (Call c : lists) {
      int own = c.arguments - 1 - c.keyCount;
      r.bulk(c.keyCount).bulk(own).raw(c.encoded, c.keysEnd, c.encoded.length - c.keysEnd);
      arguments += 2 + own;
    }
    if (lists.size() > 1) { // with one list, every request uses it: no indexes
      for (int list : listOf) {
        r.bulk(list);
      }
      arguments += calls.size();
    }
    return new Call(r.toBytes(), arguments, calls.get(0).firstKey, keysEnd, keyCount, calls.get(0).admits);
  }

  /** Where a call's keys begin: after its first element, numkeys ({@code $<n>\r\n<digits>\r\n}). */
  private static int keysStart(Call c) {
    int crlf = 0;
    for (int i = 0; i < c.keysEnd; i++) {
      if (c.encoded[i] == '\n' && ++crlf == 2) {
        return i + 1;
      }
    }
    throw new IllegalStateException("a call without numkeys");
  }

  /** Whether two calls have the same number of keys and the same arguments after them. */
  private static boolean sameArguments(Call a, Call b) {
    return a.keyCount == b.keyCount && Arrays.equals(a.encoded, a.keysEnd, a.encoded.length, b.encoded,
        b.keysEnd, b.encoded.length);
  }

  /** Whether two calls have the same keys (the encoded numkeys and keys). */
  static boolean sameKeys(Call a, Call b) {
    return a.keysEnd == b.keysEnd && Arrays.equals(a.encoded, 0, a.keysEnd, b.encoded, 0, b.keysEnd);
  }

  /** Mode {@code n}: n copies of one call. */
  static final byte[] REPEAT = {'n'};

  /** Whether two calls on the same keys are the same request (their arguments are equal bytes). */
  public static boolean sameRequest(Call a, Call b) {
    return a.keysEnd == b.keysEnd
        && Arrays.equals(a.encoded, a.keysEnd, a.encoded.length, b.encoded, b.keysEnd, b.encoded.length);
  }

  /**
   * One call deciding n copies of one acquisition call, one after another (mode {@code n}: ARGV is
   * {@code n}, n, then the call's arguments): what {@link #batch} of n equal calls decides, sent
   * once. Redis stops evaluating at the first refusal, which every later copy would repeat; the
   * reply is m, then m replies after their lengths ({@link #splitRepeat}).
   */
  public static Call repeat(Call call, int n) {
    Resp r = Resp.scratch();
    r.raw(call.encoded, 0, call.keysEnd).bulk(REPEAT).bulk(n).raw(call.encoded, call.keysEnd,
        call.encoded.length - call.keysEnd);
    return new Call(r.toBytes(), call.arguments + 2, call.firstKey, call.keysEnd, call.keyCount, call.admits);
  }

  /**
   * The replies of {@link #repeat} of n copies, in order: the m given, then the m-th for the rest.
   *
   * @throws IllegalStateException when the reply is not 1 to n length-prefixed replies after m
   */
  public static long[][] splitRepeat(long[] reply, int n) {
    if (reply == null || reply.length == 0 || reply[0] < 1 || reply[0] > n) {
      throw new IllegalStateException("repeat reply: expected a count from 1 to " + n + ", got "
          + (reply == null || reply.length == 0 ? "nothing" : Long.toString(reply[0])));
    }
    int m = (int) reply[0];
    long[][] given = split(Arrays.copyOfRange(reply, 1, reply.length), m);
    long[][] out = new long[n][];
    for (int i = 0; i < n; i++) {
      out[i] = i < m ? given[i] : given[m - 1].clone();
    }
    return out;
  }

  /** A batch's short reply to one token-bucket acquisition admitted: r, t in nanoseconds. */
  static final long ADMITTED = -1;

  /** A batch's short reply to one token-bucket acquisition refused: r, t and Retry-After in nanoseconds. */
  static final long REFUSED = -2;

  /**
   * A short reply ({@link #ADMITTED} or {@link #REFUSED} at {@code reply[at]}, the script's fast
   * path for one token bucket, where every duration is below 2^53 ns) as a single call's reply:
   * flag, allowed, r, t (s, ns), Retry-After (s, ns), lease id, next (s, ns) sent as t.
   */
  private static long[] oneTokenBucket(long[] reply, int at) {
    boolean admitted = reply[at] == ADMITTED;
    long reset = reply[at + 2];
    long retry = admitted ? 0 : reply[at + 3];
    long flag = admitted ? 1 : 0;
    return new long[] {flag, flag, reply[at + 1], reset / E9, reset % E9, retry / E9, retry % E9, 0, reset / E9,
        reset % E9};
  }

  /**
   * The replies of a batch of n calls, in order: each a single call's reply after its length, or a
   * short form ({@link #ADMITTED}, {@link #REFUSED}).
   *
   * @throws IllegalStateException when the reply is not n length-prefixed replies
   */
  public static long[][] split(long[] reply, int n) {
    long[][] out = new long[n][];
    int at = 0;
    for (int i = 0; i < n; i++) {
      long form = reply == null || at >= reply.length ? Long.MIN_VALUE : reply[at];
      int len = form == ADMITTED ? 2 : form == REFUSED ? 3 : (int) Math.min(form, Integer.MAX_VALUE);
      if (len < 0 || len > reply.length - at - 1) {
        throw new IllegalStateException("batch reply: expected " + n + " length-prefixed replies, reply "
            + (i + 1) + " is missing or longer than the " + (reply == null ? 0 : reply.length) + " values");
      }
      out[i] = form == ADMITTED || form == REFUSED ? oneTokenBucket(reply, at)
          : Arrays.copyOfRange(reply, at + 1, at + 1 + len);
      at += 1 + len;
    }
    if (at != reply.length) {
      throw new IllegalStateException("batch reply: expected " + n + " replies in " + at + " values, got "
          + reply.length + " values");
    }
    return out;
  }

  /**
   * Encodes a call: numkeys, the keys of these acquisitions in order, then the arguments (see the
   * table above). A policy's arguments that do not change from call to call are encoded once per
   * policy; a key's policy part once per policy and key prefix.
   *
   * @param routed whether the connection is a Cluster's, which routes by the first key
   * @param nowNanos the test ticker's time, or null for Redis TIME
   * @param leaseIds per acquisition, the lease to release (mode r), or null
   */
  public static Call encode(KeyLayout layout, boolean routed, byte[] mode, Long nowNanos, long marginMillis,
      List<Acquisition> acquisitions, long[] leaseIds) {
    int n = acquisitions.size();
    int keys = n;
    for (int j = 0; j < n; j++) {
      if (acquisitions.get(j).policy().algorithm() == Algorithm.CONCURRENCY) {
        keys++;
      }
    }
    boolean rememberable = keys == n && nowNanos == null && Arrays.equals(mode, ACQUIRE);
    Resp r = Resp.scratch();
    r.bulk(keys);
    for (int j = 0; j < n; j++) {
      Acquisition a = acquisitions.get(j);
      layout.writeKey(r, a.policy(), a.key(), false);
      if (a.policy().algorithm() == Algorithm.CONCURRENCY) {
        layout.writeKey(r, a.policy(), a.key(), true);
      }
    }
    int keysEnd = r.size();
    r.bulk(mode);
    if (nowNanos == null) {
      r.raw(EMPTY_BULK).raw(EMPTY_BULK);
    } else {
      r.bulk(Math.floorDiv(nowNanos, E9)).bulk(Math.floorMod(nowNanos, E9));
    }
    r.bulk(marginMillis);
    for (int j = 0; j < n; j++) {
      Acquisition a = acquisitions.get(j);
      Encoded c = constants(a.policy());
      r.raw(c.head).bulk(a.cost()).raw(c.middle);
      if (a.policy().algorithm() == Algorithm.CONCURRENCY) {
        r.bulk(leaseIds == null ? 0 : leaseIds[j]);
      } else {
        r.raw(c.last);
      }
    }
    byte[] first = routed ? layout.key(acquisitions.get(0).policy(), acquisitions.get(0).key()) : null;
    return new Call(r.toBytes(), 1 + keys + 4 + 8 * n, first, keysEnd, keys, rememberable,
        Arrays.equals(mode, ACQUIRE));
  }

  /**
   * A policy's arguments that do not change from call to call, encoded: algorithm and q (before
   * the cost), the four after it, and the last (none for concurrency: the lease id).
   */
  private static final class Encoded {
    final byte[] head;
    final byte[] middle;
    final byte[] last;

    Encoded(byte[][] c) {
      this.head = new Resp(32).bulk(c[0]).bulk(c[1]).toBytes();
      this.middle = new Resp(64).bulk(c[2]).bulk(c[3]).bulk(c[4]).bulk(c[5]).toBytes();
      this.last = Resp.encode(c[6]);
    }
  }

  /** A policy's arguments that do not change from call to call, computed once per policy. */
  private static Encoded constants(QuotaPolicy p) {
    Encoded e = CONSTANTS.get(p);
    if (e != null) {
      return e;
    }
    byte[][] c = new byte[7][];
    c[1] = num(p.quota());
    switch (p.algorithm()) {
      case TOKEN_BUCKET: {
        long t = p.emissionIntervalNanos();
        long tau = p.burstToleranceNanos();
        c[0] = new byte[] {'g'};
        c[2] = num(t / E9);
        c[3] = num(t % E9);
        c[4] = num(tau / E9);
        c[5] = num(tau % E9);
        c[6] = num(p.windowSeconds());
        break;
      }
      case CONCURRENCY: {
        long lt = p.leaseTimeout().toNanos();
        c[0] = new byte[] {'c'};
        c[2] = num(lt / E9);
        c[3] = num(lt % E9);
        c[4] = ZERO;
        c[5] = ZERO;
        c[6] = ZERO;
        break;
      }
      default:
        c[0] = new byte[] {p.algorithm() == Algorithm.FIXED_WINDOW ? (byte) 'f' : (byte) 's'};
        c[2] = num(p.windowSeconds());
        c[3] = ZERO;
        c[4] = ZERO;
        c[5] = ZERO;
        c[6] = ZERO;
    }
    e = new Encoded(c);
    if (CONSTANTS.size() > 10_000) {
      CONSTANTS.clear(); // policies come from configuration; never let stale versions pile up
    }
    CONSTANTS.put(p, e);
    return e;
  }

  /** Whether the reply says every acquisition was allowed. */
  public static boolean allAllowed(long[] reply) {
    return reply[0] == 1L;
  }

  /**
   * The outcomes in a reply, one per acquisition.
   *
   * @throws IllegalStateException if the reply is not shaped as the script answers
   */
  public static List<PolicyOutcome> outcomes(long[] reply, List<Acquisition> acquisitions) {
    if (reply == null || reply.length != 1 + FIELDS * acquisitions.size()) {
      throw new IllegalStateException("unexpected reply from the Headroom script: "
          + (reply == null ? "not an array of integers" : Arrays.toString(reply)));
    }
    if (acquisitions.size() == 1) {
      return List.of(outcome(reply, 1, acquisitions.get(0))); // kept as it is by Decision's copy
    }
    List<PolicyOutcome> out = new ArrayList<>(acquisitions.size());
    int i = 1;
    for (Acquisition a : acquisitions) {
      out.add(outcome(reply, i, a));
      i += FIELDS;
    }
    return out;
  }

  /** The outcome of one acquisition, whose fields start at {@code reply[i]}. */
  private static PolicyOutcome outcome(long[] reply, int i, Acquisition a) {
    boolean allowed = reply[i] == 1L;
    long remaining = reply[i + 1];
    long reset = nanos(reply[i + 2], reply[i + 3]);
    long retry = nanos(reply[i + 4], reply[i + 5]);
    long leaseId = reply[i + 6];
    long next = nanos(reply[i + 7], reply[i + 8]);
    Lease lease = allowed && leaseId != 0 && a.cost() > 0 ? new Lease(a.policy(), a.key(), leaseId, a.cost()) : null;
    return new PolicyOutcome(a.policy(), a.key(), a.cost(), allowed, remaining, reset, nextQuota(a.policy(), reset, next),
        retry, lease);
  }

  /**
   * The {@code t} of draft-ietf-httpapi-ratelimit-headers-10 and -11 section 4.1.2, the time until
   * more quota is available, of a reply. The script computes it for the windows, as
   * {@code FixedWindow} and {@code SlidingWindow} of the core do (the sliding window's needs the
   * two counters and the time into the window, which only the script sees), and sends it in the
   * same reply: one call per decision still. A token bucket's follows from its reset alone
   * ({@code TAT - now}, {@link PolicyOutcome#tokenBucketNextQuotaNanos}), derived here so that the
   * script's fast path stays as it is; a concurrency policy's is its reset (the first lease back).
   */
  private static long nextQuota(QuotaPolicy p, long reset, long next) {
    return p.algorithm() == Algorithm.TOKEN_BUCKET ? PolicyOutcome.tokenBucketNextQuotaNanos(p, reset) : next;
  }

  /** The lease id in a reply for the acquisition at {@code index}, 0 when none. */
  public static long leaseId(long[] reply, int index) {
    return reply[1 + FIELDS * index + 6];
  }

  static long nanos(long seconds, long nanos) {
    if (seconds >= Long.MAX_VALUE / E9) {
      long whole = Math.multiplyHigh(seconds, E9) == 0 ? seconds * E9 : Long.MAX_VALUE;
      return whole < 0 || whole > Long.MAX_VALUE - nanos ? Long.MAX_VALUE : whole + nanos;
    }
    return seconds * E9 + nanos;
  }

  private static byte[] num(long v) {
    return Long.toString(v).getBytes(StandardCharsets.US_ASCII);
  }

  private static String sha1Hex(byte[] data) {
    try {
      byte[] d = MessageDigest.getInstance("SHA-1").digest(data);
      StringBuilder b = new StringBuilder(40);
      for (byte x : d) {
        b.append(Character.forDigit((x >> 4) & 0xf, 16)).append(Character.forDigit(x & 0xf, 16));
      }
      return b.toString();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
