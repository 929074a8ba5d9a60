package dev.headroom.redis.internal;

import dev.headroom.Acquisition;
import dev.headroom.Lease;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaPolicy;
import dev.headroom.internal.Gcra;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;

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
 *   reply  modes a and r: flag (all allowed), then 7 integers per acquisition: allowed, r,
 *          t seconds, t nanos, retry-after seconds, retry-after nanos, lease id
 * </pre>
 *
 * Policy constants that need division ({@code T = ceil(w / q)}, {@code tau = q * T}) are computed
 * here by {@link Gcra} in Java longs, so that the script only adds, multiplies and compares.
 *
 * <p>Immutable and thread-safe.
 */
public final class DecisionScript {

  public static final byte[] ACQUIRE = {'a'};
  public static final byte[] CHARGE = {'c'};
  public static final byte[] GIVE_BACK = {'r'};

  /** Fields per acquisition in a reply. */
  static final int FIELDS = 7;

  private static final long E9 = 1_000_000_000L;
  private static final byte[] EMPTY = new byte[0];
  private static final byte[] ZERO = {'0'};
  private static final java.util.concurrent.ConcurrentHashMap<QuotaPolicy, byte[][]> CONSTANTS =
      new java.util.concurrent.ConcurrentHashMap<>();

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

  /** The keys of these acquisitions, in order. */
  public static byte[][] keys(KeyLayout layout, List<Acquisition> acquisitions) {
    List<byte[]> keys = new ArrayList<>(acquisitions.size() + 1);
    for (Acquisition a : acquisitions) {
      for (byte[] k : layout.keys(a)) {
        keys.add(k);
      }
    }
    return keys.toArray(new byte[0][]);
  }

  /**
   * The arguments for a call.
   *
   * @param nowNanos the test ticker's time, or null for Redis TIME
   * @param leaseIds per acquisition, the lease to release (mode r), or null
   */
  public static byte[][] args(byte[] mode, Long nowNanos, long marginMillis, List<Acquisition> acquisitions,
      long[] leaseIds) {
    byte[][] args = new byte[4 + 8 * acquisitions.size()][];
    args[0] = mode;
    if (nowNanos == null) {
      args[1] = EMPTY;
      args[2] = EMPTY;
    } else {
      args[1] = num(Math.floorDiv(nowNanos, E9));
      args[2] = num(Math.floorMod(nowNanos, E9));
    }
    args[3] = num(marginMillis);
    int i = 4;
    for (int j = 0; j < acquisitions.size(); j++) {
      Acquisition a = acquisitions.get(j);
      byte[][] constant = constants(a.policy());
      args[i] = constant[0];
      args[i + 1] = constant[1];
      args[i + 2] = num(a.cost());
      args[i + 3] = constant[2];
      args[i + 4] = constant[3];
      args[i + 5] = constant[4];
      args[i + 6] = constant[5];
      args[i + 7] = a.policy().algorithm() == dev.headroom.Algorithm.CONCURRENCY
          ? (leaseIds == null ? ZERO : num(leaseIds[j])) : constant[6];
      i += 8;
    }
    return args;
  }

  /** A policy's arguments that do not change from call to call, computed once per policy. */
  private static byte[][] constants(QuotaPolicy p) {
    byte[][] c = CONSTANTS.get(p);
    if (c != null) {
      return c;
    }
    c = new byte[7][];
    c[1] = num(p.quota());
    switch (p.algorithm()) {
      case TOKEN_BUCKET: {
        long t = Gcra.emissionInterval(p);
        long tau = Gcra.tolerance(p);
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
        c[0] = new byte[] {p.algorithm() == dev.headroom.Algorithm.FIXED_WINDOW ? (byte) 'f' : (byte) 's'};
        c[2] = num(p.windowSeconds());
        c[3] = ZERO;
        c[4] = ZERO;
        c[5] = ZERO;
        c[6] = ZERO;
    }
    if (CONSTANTS.size() > 10_000) {
      CONSTANTS.clear(); // policies come from configuration; never let stale versions pile up
    }
    CONSTANTS.put(p, c);
    return c;
  }

  /** Whether the reply says every acquisition was allowed. */
  public static boolean allAllowed(List<Object> reply) {
    return ((Long) reply.get(0)) == 1L;
  }

  /**
   * The outcomes in a reply, one per acquisition.
   *
   * @throws IllegalStateException if the reply is not shaped as the script answers
   */
  public static List<PolicyOutcome> outcomes(List<Object> reply, List<Acquisition> acquisitions) {
    if (reply == null || reply.size() != 1 + FIELDS * acquisitions.size()) {
      throw new IllegalStateException("unexpected reply from the Headroom script: " + reply);
    }
    List<PolicyOutcome> out = new ArrayList<>(acquisitions.size());
    int i = 1;
    for (Acquisition a : acquisitions) {
      boolean allowed = (Long) reply.get(i) == 1L;
      long remaining = (Long) reply.get(i + 1);
      long reset = nanos((Long) reply.get(i + 2), (Long) reply.get(i + 3));
      long retry = nanos((Long) reply.get(i + 4), (Long) reply.get(i + 5));
      long leaseId = (Long) reply.get(i + 6);
      Lease lease = allowed && leaseId != 0 && a.cost() > 0 ? new Lease(a.policy(), a.key(), leaseId, a.cost()) : null;
      out.add(new PolicyOutcome(a.policy(), a.key(), a.cost(), allowed, remaining, reset, retry, lease));
      i += FIELDS;
    }
    return out;
  }

  /** The lease id in a reply for the acquisition at {@code index}, 0 when none. */
  public static long leaseId(List<Object> reply, int index) {
    return (Long) reply.get(1 + FIELDS * index + 6);
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
