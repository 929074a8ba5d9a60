package dev.headroom.benchmarks.ramp;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An open-loop load ramp against a {@link SimulatedUpstream} (directly or through a limiter):
 * requests arrive as a Poisson process whose rate follows a profile in multiples of the
 * upstream's healthy capacity {@code C = slots / service}, whatever the answers take. A closed
 * loop (a fixed number of clients each waiting for its answer) slows down with its server and
 * never overloads it; this one does, as independent clients do.
 *
 * <p>The profile, in seconds: {@code warm} at {@code low} x C, a linear ramp of {@code ramp} to
 * {@code high} x C, {@code hold} there, the ramp back down, and {@code warm} at {@code low} again.
 * In the halved case the upstream's slots are halved ({@code GET /admin/slots} on the upstream,
 * not through the limiter) {@code halveAfter} seconds into the hold, and never restored within the
 * run. The figures of one run:
 * <ul>
 *   <li>a CSV with one row per second (of completion): the requests sent, the upstream's capacity,
 *       the 2xx answers (goodput), the refusals (429 and 503), the other answers and failed
 *       exchanges, the timeouts ({@code timeout}: no answer in time, counted as a failure), and the
 *       p50 and p99 latency of that second's 2xx answers, and the mean adaptive limit its answers
 *       advertised ({@code "adaptive";q=} in {@code RateLimit-Policy}; empty without one);</li>
 *   <li>one {@code SUMMARY} line on standard output: the admitted (2xx) p50 and p99 of the unloaded window
 *       (the last 10 s of the first {@code warm}, after the limiter's warm-up), and over the
 *       overload window (the last {@code measure} seconds of the hold, in the halved case all after
 *       the halving) the goodput, the capacity, their ratio, the admitted p50 and p99 (requests
 *       sent in the window), each over its unloaded figure, and the refusals, failures and timeouts a
 *       second.</li>
 * </ul>
 *
 * <p>State: one slot per request in preallocated arrays (its send time, its status, its latency),
 * written by the client's threads at the index the arrival thread gave it; read once every
 * exchange has completed (the futures' completion orders the writes before the reads).
 *
 * <p>Usage: {@code java -cp benchmarks.jar dev.headroom.benchmarks.ramp.LoadRamp key=value ...}
 * with {@code target} (the URL to load), {@code upstream} (the simulated upstream's base URL, for
 * its capacity), {@code csv}, {@code label} (the summary's first words), and optionally
 * {@code slots} (20), {@code serviceMs} (200), {@code low} (0.5), {@code high} (3), {@code warm}
 * (15), {@code ramp} (20), {@code hold} (60), {@code halveAfter} (0: never), {@code measure} (20),
 * {@code timeoutMs} (2000), {@code seed} (1), {@code prewarm} (10: seconds at {@code low} before
 * the profile starts, not counted, while the limiter's code is compiled and its pools fill).
 */
public final class LoadRamp {

  /** A status for an exchange that got no answer within the timeout. */
  static final int TIMEOUT = -1;
  /** A status for an exchange that failed otherwise (a reset, a refused connection). */
  static final int FAILED = 0;
  /** The unloaded window: the last this many seconds of the first {@code warm}. */
  static final int UNLOADED_SECONDS = 10;
  /** The adaptive limit a Headroom gateway advertises ({@code routes[].adaptive}), in {@code RateLimit-Policy}. */
  private static final Pattern ADAPTIVE_Q = Pattern.compile("\"adaptive\";q=(\\d+)");

  private final Map<String, String> options;
  private final int slots;
  private final double serviceSeconds;
  private final double low;
  private final double high;
  private final int warm;
  private final int ramp;
  private final int hold;
  private final int halveAfter;
  private final int measure;
  private final Duration timeout;
  private final int prewarm;

  LoadRamp(Map<String, String> options) {
    this.options = options;
    this.slots = Integer.parseInt(options.getOrDefault("slots", "20"));
    this.serviceSeconds = Double.parseDouble(options.getOrDefault("serviceMs", "200")) / 1000;
    this.low = Double.parseDouble(options.getOrDefault("low", "0.5"));
    this.high = Double.parseDouble(options.getOrDefault("high", "3"));
    this.warm = Integer.parseInt(options.getOrDefault("warm", "15"));
    this.ramp = Integer.parseInt(options.getOrDefault("ramp", "20"));
    this.hold = Integer.parseInt(options.getOrDefault("hold", "60"));
    this.halveAfter = Integer.parseInt(options.getOrDefault("halveAfter", "0"));
    this.measure = Integer.parseInt(options.getOrDefault("measure", "20"));
    this.timeout = Duration.ofMillis(Long.parseLong(options.getOrDefault("timeoutMs", "2000")));
    this.prewarm = Integer.parseInt(options.getOrDefault("prewarm", "10"));
    if (warm < UNLOADED_SECONDS) {
      throw new IllegalArgumentException("warm: " + warm + " is too short; expected at least " + UNLOADED_SECONDS + " seconds");
    }
    if (measure > hold - halveAfter) {
      throw new IllegalArgumentException("measure: " + measure + " does not fit in the hold after the halving ("
          + (hold - halveAfter) + " s); expected at most that");
    }
  }

  /** The healthy capacity, requests a second. */
  double capacity() {
    return slots / serviceSeconds;
  }

  int seconds() {
    return 2 * warm + 2 * ramp + hold;
  }

  /** The offered rate at {@code t} seconds, in multiples of the healthy capacity. */
  double multiple(double t) {
    if (t < warm) { // and before 0: the prewarm
      return low;
    }
    t -= warm;
    if (t < ramp) {
      return low + (high - low) * t / ramp;
    }
    t -= ramp;
    if (t < hold) {
      return high;
    }
    t -= hold;
    if (t < ramp) {
      return high - (high - low) * t / ramp;
    }
    return low;
  }

  /** The second the halving happens at; -1 when it does not. */
  int halvedAt() {
    return halveAfter > 0 ? warm + ramp + halveAfter : -1;
  }

  /** The upstream's capacity in second {@code s}. */
  double capacityAt(int s) {
    int h = halvedAt();
    return h >= 0 && s >= h ? (slots / 2) / serviceSeconds : capacity();
  }

  void run() throws IOException, InterruptedException {
    URI target = URI.create(options.get("target"));
    String upstream = options.get("upstream");
    ExecutorService executor = Executors.newFixedThreadPool(2);
    HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(executor)
        .connectTimeout(timeout).build();
    setSlots(client, upstream, slots);
    HttpRequest request = HttpRequest.newBuilder(target).timeout(timeout).GET().build();

    int capacityRequests = (int) (capacity() * high * (seconds() + prewarm) * 1.3) + 10_000;
    long[] sent = new long[capacityRequests];
    long[] latency = new long[capacityRequests];
    int[] status = new int[capacityRequests];
    int[] limit = new int[capacityRequests];
    CompletableFuture<?>[] exchanges = new CompletableFuture<?>[capacityRequests];
    AtomicInteger inflight = new AtomicInteger();
    SplittableRandom random = new SplittableRandom(Long.parseLong(options.getOrDefault("seed", "1")));

    long next = System.nanoTime();
    long start = next + TimeUnit.SECONDS.toNanos(prewarm);
    long end = start + TimeUnit.SECONDS.toNanos(seconds());
    int n = 0;
    boolean halved = false;
    while (next < end && n < capacityRequests) {
      double t = (next - start) / 1e9;
      if (!halved && halvedAt() >= 0 && t >= halvedAt()) {
        halved = true;
        setSlots(client, upstream, slots / 2);
      }
      long now = System.nanoTime();
      if (next > now) {
        LockSupport.parkNanos(next - now);
      }
      int i = n++;
      sent[i] = next - start;
      long began = System.nanoTime();
      inflight.incrementAndGet();
      exchanges[i] = client.sendAsync(request, HttpResponse.BodyHandlers.discarding()).handle((r, e) -> {
        latency[i] = System.nanoTime() - began;
        status[i] = r != null ? r.statusCode() : e instanceof HttpTimeoutException
            || e.getCause() instanceof HttpTimeoutException ? TIMEOUT : FAILED;
        Matcher q = r == null ? null : ADAPTIVE_Q.matcher(r.headers().firstValue("RateLimit-Policy").orElse(""));
        limit[i] = q != null && q.find() ? Integer.parseInt(q.group(1)) : -1;
        inflight.decrementAndGet();
        return null;
      });
      double rate = multiple(t) * capacity();
      next += (long) (-Math.log(1 - random.nextDouble()) / rate * 1e9); // an exponential gap: Poisson arrivals
    }
    try {
      CompletableFuture.allOf(Arrays.copyOf(exchanges, n)).get(timeout.toMillis() + 10_000, TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(inflight.get() + " exchanges still open after the run", e);
    }
    report(n, sent, latency, status, limit);
    executor.shutdownNow();
  }

  private static void setSlots(HttpClient client, String upstream, int n) throws IOException, InterruptedException {
    HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(upstream + "/admin/slots?n=" + n)).build(),
        HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      throw new IllegalStateException("the upstream did not take slots " + n + ": " + r.statusCode() + " " + r.body());
    }
  }

  private void report(int n, long[] sent, long[] latency, int[] status, int[] limit) throws IOException {
    int seconds = seconds() + (int) timeout.toSeconds() + 2;
    int[] offered = new int[seconds];
    int[] ok = new int[seconds];
    int[] refused = new int[seconds];
    int[] failed = new int[seconds];
    int[] timedOut = new int[seconds];
    long[][] okLatency = new long[seconds][];
    int[] okCount = new int[seconds];
    long[] limitSum = new long[seconds];
    int[] limitCount = new int[seconds];
    for (int i = 0; i < n; i++) {
      if (sent[i] < 0) {
        continue; // the prewarm's
      }
      offered[(int) (sent[i] / 1_000_000_000L)]++;
      int s = (int) Math.min(seconds - 1, (sent[i] + latency[i]) / 1_000_000_000L);
      if (limit[i] >= 0) {
        limitSum[s] += limit[i];
        limitCount[s]++;
      }
      switch (kind(status[i])) {
        case OK -> {
          ok[s]++;
          if (okLatency[s] == null) {
            okLatency[s] = new long[64];
          } else if (okCount[s] == okLatency[s].length) {
            okLatency[s] = Arrays.copyOf(okLatency[s], okCount[s] * 2);
          }
          okLatency[s][okCount[s]++] = latency[i];
        }
        case REFUSED -> refused[s]++;
        case TIMEOUT -> timedOut[s]++;
        case FAILED -> failed[s]++;
      }
    }
    try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(Path.of(options.get("csv"))))) {
      csv.println("second,offered,capacity,ok,refused,failed,timeout,p50_ms,p99_ms,adaptive_limit");
      for (int s = 0; s < seconds(); s++) {
        long[] l = okLatency[s] == null ? new long[0] : Arrays.copyOf(okLatency[s], okCount[s]);
        Arrays.sort(l);
        csv.printf(Locale.ROOT, "%d,%d,%.0f,%d,%d,%d,%d,%s,%s,%s%n", s, offered[s], capacityAt(s), ok[s], refused[s],
            failed[s], timedOut[s], ms(l, 0.50), ms(l, 0.99),
            limitCount[s] == 0 ? "" : String.format(Locale.ROOT, "%.1f", (double) limitSum[s] / limitCount[s]));
      }
    }
    long[] unloaded = admittedSentIn(n, sent, latency, status, warm - UNLOADED_SECONDS, warm);
    long unloadedP50 = percentile(unloaded, 0.50);
    long unloadedP99 = percentile(unloaded, 0.99);
    int from = warm + ramp + hold - measure;
    int to = warm + ramp + hold;
    long[] window = admittedSentIn(n, sent, latency, status, from, to);
    double good = 0;
    double refusals = 0;
    double failures = 0;
    double timeouts = 0;
    double cap = 0;
    for (int s = from; s < to; s++) {
      good += ok[s];
      refusals += refused[s];
      failures += failed[s];
      timeouts += timedOut[s];
      cap += capacityAt(s);
    }
    long p50 = percentile(window, 0.50);
    long p99 = percentile(window, 0.99);
    System.out.printf(Locale.ROOT, "SUMMARY %s unloaded_p50_ms=%.1f unloaded_p99_ms=%.1f goodput=%.1f capacity=%.1f"
        + " fraction=%.3f p50_ms=%.1f p99_ms=%.1f p50_ratio=%.2f p99_ratio=%.2f refused=%.1f failed=%.1f timeout=%.1f"
        + " offered=%.1f%n",
        options.get("label"), unloadedP50 / 1e6, unloadedP99 / 1e6, good / measure, cap / measure, good / cap,
        p50 / 1e6, p99 / 1e6, unloadedP50 > 0 ? (double) p50 / unloadedP50 : Double.NaN,
        unloadedP99 > 0 ? (double) p99 / unloadedP99 : Double.NaN, refusals / measure, failures / measure,
        timeouts / measure, high * capacity());
  }

  private enum Kind { OK, REFUSED, TIMEOUT, FAILED }

  private static Kind kind(int status) {
    if (status >= 200 && status < 300) {
      return Kind.OK;
    }
    if (status == 429 || status == 503) {
      return Kind.REFUSED;
    }
    return status == TIMEOUT ? Kind.TIMEOUT : Kind.FAILED;
  }

  /** The sorted latencies of the 2xx answers to requests sent from second {@code from} to before {@code to}. */
  private static long[] admittedSentIn(int n, long[] sent, long[] latency, int[] status, int from, int to) {
    long[] l = new long[n];
    int k = 0;
    for (int i = 0; i < n; i++) {
      long s = sent[i] < 0 ? -1 : sent[i] / 1_000_000_000L;
      if (s >= from && s < to && kind(status[i]) == Kind.OK) {
        l[k++] = latency[i];
      }
    }
    l = Arrays.copyOf(l, k);
    Arrays.sort(l);
    return l;
  }

  /** The {@code q} quantile of sorted values (nearest rank); 0 for none. */
  static long percentile(long[] sorted, double q) {
    if (sorted.length == 0) {
      return 0;
    }
    int rank = (int) Math.ceil(q * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
  }

  private static String ms(long[] sorted, double q) {
    return sorted.length == 0 ? "" : String.format(Locale.ROOT, "%.1f", percentile(sorted, q) / 1e6);
  }

  public static void main(String[] args) throws IOException, InterruptedException {
    Map<String, String> options = new HashMap<>();
    for (String a : args) {
      int eq = a.indexOf('=');
      if (eq < 1) {
        throw new IllegalArgumentException("argument: '" + a + "' is not an option; expected key=value");
      }
      options.put(a.substring(0, eq), a.substring(eq + 1));
    }
    for (String required : new String[] {"target", "upstream", "csv", "label"}) {
      if (!options.containsKey(required)) {
        throw new IllegalArgumentException(required + ": missing; expected " + required + "=...");
      }
    }
    new LoadRamp(options).run();
    System.exit(0);
  }
}
