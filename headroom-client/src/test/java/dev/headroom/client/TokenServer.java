package dev.headroom.client;

import dev.headroom.Ticker;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real loopback server ({@link TestServer}) that meters tokens as well as requests, as LLM APIs
 * do: two fixed windows of {@code w} on the test's ticker, from the instant it was started,
 * {@code "rpm"} of {@code requests} requests and {@code "tpm"} of {@code tokens} tokens, stated as
 * draft-ietf-httpapi-ratelimit-headers-09 sections 5 and 6 say with {@code qu="tokens"}:
 *
 * <pre>
 * RateLimit-Policy: "rpm";q=100;w=60, "tpm";q=1000;w=60;qu="tokens"
 * RateLimit: "rpm";r=97;t=42, "tpm";r=250;t=42
 * </pre>
 *
 * A request uses the tokens its {@value #TOKENS_FIELD} field says (the server's own measure of the
 * request; what the client expected may differ), 0 without it. One that would take the window past
 * either quota is refused, 429 with {@code Retry-After} (the seconds to the window's end, rounded
 * up, as {@code t}), and uses nothing. Shared with the integrations' tests through the test-jar.
 */
public final class TokenServer implements AutoCloseable {

  /** The request field that says how many tokens the request uses. */
  public static final String TOKENS_FIELD = "X-Tokens";

  private final Ticker ticker;
  private final long requests;
  private final long tokens;
  private final long window;
  private final long origin;
  private final TestServer server;
  /** Per window index: requests and tokens admitted. */
  private final TreeMap<Long, long[]> used = new TreeMap<>();
  private int refusals;

  public TokenServer(Ticker ticker, long requests, long tokens, Duration window) throws IOException {
    this.ticker = ticker;
    this.requests = requests;
    this.tokens = tokens;
    this.window = window.toNanos();
    this.origin = ticker.read();
    this.server = new TestServer(ticker, this::handle);
  }

  private synchronized TestServer.Reply handle(TestServer.Request request) {
    long now = ticker.read();
    long index = (now - origin) / window;
    long end = origin + (index + 1) * window;
    long t = (end - now + 999_999_999L) / 1_000_000_000L;
    long want = request.headers().entrySet().stream().filter(e -> e.getKey().equalsIgnoreCase(TOKENS_FIELD))
        .findFirst().map(e -> Long.parseLong(e.getValue().get(0).strip())).orElse(0L);
    long[] u = used.computeIfAbsent(index, k -> new long[2]);
    boolean allowed = u[0] + 1 <= requests && u[1] + want <= tokens;
    if (allowed) {
      u[0]++;
      u[1] += want;
    } else {
      refusals++;
    }
    TestServer.Reply reply = (allowed ? TestServer.Reply.of(200).body("text/plain", "ok")
        : TestServer.Reply.of(429).header("Retry-After", Long.toString(t)).json("{\"error\":\"quota exceeded\"}"))
        .header("RateLimit-Policy", "\"rpm\";q=" + requests + ";w=" + window / 1_000_000_000L + ", \"tpm\";q=" + tokens
            + ";w=" + window / 1_000_000_000L + ";qu=\"tokens\"")
        .header("RateLimit", "\"rpm\";r=" + (requests - u[0]) + ";t=" + t + ", \"tpm\";r=" + (tokens - u[1]) + ";t=" + t);
    return reply;
  }

  public URI uri(String path) {
    return server.uri(path);
  }

  /** Requests refused so far. */
  public synchronized int refusals() {
    return refusals;
  }

  /** Requests admitted in each window so far, from the first window with any. */
  public synchronized List<Long> admittedPerWindow() {
    List<Long> out = new ArrayList<>();
    if (used.isEmpty()) {
      return out;
    }
    for (long i = used.firstKey(); i <= used.lastKey(); i++) {
      long[] u = used.get(i);
      out.add(u == null ? 0 : u[0]);
    }
    return out;
  }

  /**
   * Requests admitted in each window that admitted any, in order. For callers on several threads
   * sharing one virtual clock ({@code Scheduler.advancing}): two callers whose waits were computed
   * at the same virtual instant each advance the clock by their own wait, so the clock may pass a
   * whole window nobody was awake in. What the pacing is judged by is then the windows that
   * admitted requests: how many each took, in order, and that none was refused.
   */
  public synchronized List<Long> admittedPerBusyWindow() {
    List<Long> out = new ArrayList<>(admittedPerWindow());
    out.removeIf(n -> n == 0);
    return out;
  }

  /** The most tokens admitted in one window. */
  public synchronized long mostTokensInAWindow() {
    return used.values().stream().mapToLong(u -> u[1]).max().orElse(0);
  }

  /** One blocking call, for {@link #callers}. */
  public interface Call {
    void send() throws Exception;
  }

  /**
   * {@code callers} threads make {@code n} calls in all, each its next when its last returned;
   * the first failure is thrown.
   */
  public static void callers(int callers, int n, Call call) throws Exception {
    AtomicInteger issued = new AtomicInteger();
    ExecutorService threads = Executors.newFixedThreadPool(callers);
    try {
      List<Future<?>> all = new ArrayList<>();
      for (int i = 0; i < callers; i++) {
        all.add(threads.submit(() -> {
          while (issued.getAndIncrement() < n) {
            call.send();
          }
          return null;
        }));
      }
      for (Future<?> f : all) {
        f.get();
      }
    } finally {
      threads.shutdownNow();
    }
  }

  /** Every request received, as {@link TestServer#log()}. */
  public List<TestServer.Logged> log() {
    return server.log();
  }

  @Override
  public void close() {
    server.close();
  }
}
