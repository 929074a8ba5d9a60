package dev.headroom.client;

import dev.headroom.Ticker;
import dev.headroom.http.DiscoveryPaths;
import dev.headroom.http.body.Refusal;
import dev.headroom.http.body.RefusalReader;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandler;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;

/**
 * A client for {@link HttpClient} that reads what servers say about their limits and paces itself
 * so that it is refused as rarely as possible.
 *
 * <ul>
 *   <li>Reads RateLimit fields in every dialect (draft-ietf-httpapi-ratelimit-headers -08+ lists
 *       with {@code pk} and {@code qu}, the -07 dictionary, the -03 to -06 fields,
 *       {@code X-RateLimit-*}), Retry-After as seconds or HTTP-date, and refusal bodies (RFC 9457
 *       problem details, Graceful Boundaries), through headroom-http's parsers.
 *   <li>Keeps a budget per scope (the origin by default), policy and partition key, and holds each
 *       request until the budgets allow it, spreading requests over the window or spending them at
 *       once ({@link Pacing}); waits never block a thread (they run on the {@link Scheduler}).
 *   <li>Follows draft-09 sections 7, 7.3 and 8.5.1: malformed fields ignored, Retry-After over
 *       {@code t}, cached responses ignored, absurd values clamped by {@link Ceilings} (every
 *       number a server sends, however large, is clamped before use, so no answer can make the
 *       client throw or strand a waiting caller), instants the server states read against its
 *       {@code Date}.
 *   <li>Retries refusals with back-off ({@link RetryPolicy}; never shorter than
 *       {@link RetryPolicy#baseDelay()}, even after {@code Retry-After: 0}, and a refusal without a
 *       usable Retry-After pauses every request of its scope), then gives up with
 *       {@link RateLimitedException}, which carries the refusal.
 *   <li>Opt-in: paces vend calls by the vend rate-limit extension's data and backs off its
 *       {@code RATE_LIMITED} errors ({@link Builder#vend(VendClientOptions)}).
 *   <li>Can read the Graceful Boundaries discovery document once per origin to plan before the
 *       first request (again after a refusal of a limit it does not describe, at most once per
 *       {@link #UNFAMILIAR_LIMIT_REFETCH_INTERVAL}), and follow a refusal's same-origin guidance.
 * </ul>
 *
 * <pre>{@code
 * HeadroomClient client = HeadroomClient.builder(HttpClient.newHttpClient())
 *     .pacing(Pacing.EVEN).retry(RetryPolicy.defaults()).discoverLimits(true).build();
 * HttpResponse<String> r = client.send(request, BodyHandlers.ofString());
 * }</pre>
 *
 * <p>Thread-safe; one instance should serve a whole application, so that all its requests share
 * the budgets.
 */
public final class HeadroomClient {

  /** Discovery paths tried in order (Graceful Boundaries section 1). */
  public static final List<String> DISCOVERY_PATHS = DiscoveryPaths.ALL;

  private final HttpClient http;
  private final Ticker ticker;
  private final Scheduler scheduler;
  private final BudgetTracker budgets;
  private final ClientBudget engine;
  private final List<Interceptor> applicationInterceptors;
  private final List<Interceptor> networkInterceptors;
  private final RetryInterceptor retry;
  private final boolean followGuidance;
  private final boolean discoverLimits;
  private final int maxRefusalBytes;
  private final VendClientOptions vend;
  private final int maxDiscoveries;
  private final Duration discoveryTtl;
  private final Map<String, Discovery> discoveries = new LinkedHashMap<>();

  /**
   * One origin's discovery: the fetch, when it started (by the ticker), and the refused limits the
   * origin's documents did not describe (each forces at most one read; bounded by
   * {@link #MAX_UNFAMILIAR_LIMITS}).
   */
  private record Discovery(CompletableFuture<Reading> reading, CompletableFuture<Optional<DiscoveredLimits>> result,
      long fetchedAt, Set<String> unfamiliar) {}

  /**
   * What a discovery read found, and whether that is the origin's own answer (a document, or
   * "none here": 404 and the like) or the read failed (no answer, 5xx, 408, 429, a cut body), in
   * which case it is tried again after {@link #FAILED_DISCOVERY_RETRY} rather than the full TTL.
   */
  private record Reading(Optional<DiscoveredLimits> document, boolean definitive) {}

  /** How long a discovery read that failed is trusted before it is tried again. */
  static final Duration FAILED_DISCOVERY_RETRY = Duration.ofMinutes(1);

  /**
   * Shortest time between an origin's discovery read and one forced by a refusal of a limit its
   * document does not describe: a server that names a new limit in every refusal gets at most one
   * extra read per interval.
   */
  public static final Duration UNFAMILIAR_LIMIT_REFETCH_INTERVAL = Duration.ofMinutes(1);

  /** Most unfamiliar limits remembered per origin; past this, refusals force no more reads. */
  static final int MAX_UNFAMILIAR_LIMITS = 64;

  private HeadroomClient(Builder b) {
    ClientBudget engine = b.engine != null ? b.engine : b.engineSettings.vend(b.vend).build();
    this.http = b.http;
    this.ticker = engine.ticker();
    this.scheduler = engine.scheduler();
    this.budgets = engine.tracker();
    this.engine = engine;
    this.vend = b.vend;
    this.applicationInterceptors = List.copyOf(b.interceptors);
    this.networkInterceptors = List.copyOf(b.networkInterceptors);
    this.retry = new RetryInterceptor(engine.retryPolicy(), engine.ceilings());
    this.followGuidance = b.followGuidance;
    this.discoverLimits = b.discoverLimits;
    this.maxRefusalBytes = b.maxRefusalBytes;
    this.maxDiscoveries = engine.ceilings().maxTrackedScopes();
    this.discoveryTtl = b.discoveryTtl;
  }

  /** Starts a client over an {@link HttpClient} (which it does not close). */
  public static Builder builder(HttpClient http) {
    return new Builder(http);
  }

  /**
   * Sends a request once its budgets allow it, retrying refusals as the {@link RetryPolicy} says.
   *
   * @throws RateLimitedException when the request was refused and not (or no longer) retried
   * @throws IOException when sending failed
   * @throws InterruptedException when the calling thread was interrupted while waiting
   */
  public <T> HttpResponse<T> send(HttpRequest request, BodyHandler<T> handler) throws IOException, InterruptedException {
    return await(call(request, handler, null));
  }

  /**
   * {@link #send(HttpRequest, BodyHandler)} for a request expected to cost {@code cost} besides one
   * request (tokens, ...: {@link RequestCost}); it waits until every budget it draws on covers it.
   */
  public <T> HttpResponse<T> send(HttpRequest request, BodyHandler<T> handler, RequestCost cost)
      throws IOException, InterruptedException {
    return await(sendAsync(request, handler, cost));
  }

  private static <T> HttpResponse<T> await(CompletableFuture<HttpResponse<T>> f) throws IOException, InterruptedException {
    try {
      return f.get();
    } catch (InterruptedException e) {
      f.cancel(true);
      throw e;
    } catch (ExecutionException e) {
      throw unwrap(e.getCause());
    }
  }

  /**
   * Sends a request asynchronously: the future completes once the request was admitted, sent and
   * answered, or exceptionally with {@link RateLimitedException} (refused and not retried) or the
   * {@link IOException} of the transport.
   */
  public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, BodyHandler<T> handler) {
    return call(request, handler, null);
  }

  /** {@link #sendAsync(HttpRequest, BodyHandler)} for a request expected to cost {@code cost} ({@link RequestCost}). */
  public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, BodyHandler<T> handler,
      RequestCost cost) {
    return call(request, handler, Objects.requireNonNull(cost, "cost"));
  }

  /** One call; {@code cost} null for the engine's ({@link ClientBudget#costOf}). */
  private <T> CompletableFuture<HttpResponse<T>> call(HttpRequest request, BodyHandler<T> handler, RequestCost cost) {
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(handler, "handler");
    CompletableFuture<?> before = discoverLimits
        ? discoverAsync(request.uri()).handle((d, e) -> null)
        : CompletableFuture.completedFuture(null);
    List<Interceptor> chain = new ArrayList<>(applicationInterceptors);
    chain.add(vend == null ? retry : new VendInterceptor(vend, retry));
    if (followGuidance) {
      chain.add(new GuidanceInterceptor());
    }
    chain.add(this::noticeUnfamiliarLimits);
    chain.add(new PacingInterceptor(budgets, engine::costOf));
    chain.addAll(networkInterceptors);
    if (vend != null) {
      chain.add(new VendResponseStep());
    }
    chain.add(new NetworkInterceptor(http, handler, maxRefusalBytes, vend == null ? 0 : vend.maxBodyBytes(), ticker));
    CallState state = new CallState();
    state.cost = cost;
    return before.thenCompose(v -> new RealChain(chain, 0, request, this, state).proceed(request)).thenApply(ex -> {
      if (ex.hasClientBody()) {
        throw new CompletionException(new RateLimitedException(ex, 1, "an interceptor returned the refusal"));
      }
      @SuppressWarnings("unchecked")
      HttpResponse<T> response = (HttpResponse<T>) ex.response();
      return response;
    });
  }

  /**
   * Reads the origin's Graceful Boundaries discovery document ({@link #DISCOVERY_PATHS}), once per
   * origin and again when the last reading is older than {@link Builder#discoveryTtl(Duration)}
   * (the spec asks long-lived agents to re-check every 1 to 6 hours), and plans requests to the
   * endpoints it describes until RateLimit fields say more.
   *
   * @return the document; empty when the origin publishes none that can be read (the client then
   *     paces by what responses say, as spec appendix A advises)
   */
  public Optional<DiscoveredLimits> discover(URI uri) throws IOException, InterruptedException {
    CompletableFuture<Optional<DiscoveredLimits>> f = discoverAsync(uri);
    try {
      return f.get();
    } catch (ExecutionException e) {
      throw unwrap(e.getCause());
    }
  }

  /** {@link #discover} without blocking. */
  public CompletableFuture<Optional<DiscoveredLimits>> discoverAsync(URI uri) {
    Objects.requireNonNull(uri, "uri");
    String origin = Origins.of(uri);
    long now = ticker.read();
    synchronized (discoveries) {
      Discovery known = discoveries.get(origin);
      if (known != null && (!known.reading().isDone() || now - known.fetchedAt() < trusted(known))) {
        return known.result();
      }
      return refetch(uri, origin, now, known == null ? ConcurrentHashMap.newKeySet() : known.unfamiliar());
    }
  }

  /** Starts a read of an origin's document; the caller holds the lock on {@link #discoveries}. */
  private CompletableFuture<Optional<DiscoveredLimits>> refetch(URI uri, String origin, long now, Set<String> unfamiliar) {
    discoveries.remove(origin);
    if (discoveries.size() >= maxDiscoveries) {
      discoveries.remove(discoveries.keySet().iterator().next());
    }
    CompletableFuture<Reading> reading = fetchDiscovery(uri, 0, false);
    CompletableFuture<Optional<DiscoveredLimits>> f = reading.thenApply(r -> {
      r.document().ifPresent(doc -> budgets.plan(origin, doc));
      return r.document();
    });
    discoveries.put(origin, new Discovery(reading, f, now, unfamiliar));
    return f;
  }

  /**
   * Watches each attempt's answer for a refusal of a limit the origin's discovery document does not
   * describe ({@link DiscoveredLimits#describes}), and then reads the document again (Graceful
   * Boundaries section 1: "an agent that receives a 429 with an unfamiliar limit value SHOULD
   * re-fetch the discovery endpoint, as limits may have changed"). Only for origins whose document
   * the client has read; at most once per unfamiliar limit, and never sooner than
   * {@link #UNFAMILIAR_LIMIT_REFETCH_INTERVAL} after the last read, so a hostile server cannot make
   * the client read it on every request. The read goes on in the background through pacing.
   */
  private CompletableFuture<Exchange> noticeUnfamiliarLimits(Interceptor.Chain chain) {
    return chain.proceed(chain.request()).thenApply(ex -> {
      if (ex.isRefused() && ex.refusal().isPresent()) {
        refetchIfUnfamiliar(chain.request().uri(), ex.refusal().get());
      }
      return ex;
    });
  }

  private void refetchIfUnfamiliar(URI uri, Refusal refusal) {
    String origin = Origins.of(uri);
    long now = ticker.read();
    synchronized (discoveries) {
      Discovery known = discoveries.get(origin);
      Reading reading = known == null ? null : known.reading().getNow(null);
      if (reading == null || reading.document().isEmpty()
          || reading.document().get().describes(refusal.limitId(), refusal.limit())) {
        return;
      }
      if (now - known.fetchedAt() < UNFAMILIAR_LIMIT_REFETCH_INTERVAL.toNanos()
          || known.unfamiliar().size() >= MAX_UNFAMILIAR_LIMITS) {
        return;
      }
      String name = refusal.limitId().map(id -> "limitId " + id).orElseGet(() -> "limit " + refusal.limit().orElse(""));
      if (known.unfamiliar().add(name)) {
        refetch(uri, origin, now, known.unfamiliar());
      }
    }
  }

  /** How long a finished reading is used, in nanoseconds. */
  private long trusted(Discovery d) {
    Reading r = d.reading().getNow(null);
    return r != null && r.definitive() ? discoveryTtl.toNanos()
        : Math.min(discoveryTtl.toNanos(), FAILED_DISCOVERY_RETRY.toNanos());
  }

  private CompletableFuture<Reading> fetchDiscovery(URI uri, int index, boolean failedSoFar) {
    if (index >= DISCOVERY_PATHS.size()) {
      return CompletableFuture.completedFuture(new Reading(Optional.empty(), !failedSoFar));
    }
    URI target = uri.resolve(DISCOVERY_PATHS.get(index));
    HttpRequest request = HttpRequest.newBuilder(target).GET().header("Accept", "application/json").build();
    List<Interceptor> chain = List.of(new PacingInterceptor(budgets, r -> RequestCost.none()),
        NetworkInterceptor.bounded(http, DiscoveredLimits.MAX_BYTES, ticker));
    // per path: a document (done), the origin's "none here" (next path), or a failed read (next
    // path, and the result is retried sooner)
    return new RealChain(chain, 0, request, this).proceed(request).handle((ex, error) -> {
      if (error != null) {
        return Boolean.FALSE;
      }
      int status = ex.status();
      if (status == 200 && ex.response().body() instanceof RefusalBody) {
        RefusalBody body = (RefusalBody) ex.response().body();
        if (body.truncated()) {
          return Boolean.FALSE;
        }
        try {
          return (Object) DiscoveredLimits.parse(body.bytes());
        } catch (IllegalArgumentException notADocument) {
          return Boolean.TRUE;
        }
      }
      boolean failed = status >= 500 || status == 408 || status == 425 || status == 429;
      return (Object) Boolean.valueOf(!failed);
    }).thenCompose(o -> o instanceof DiscoveredLimits doc
        ? CompletableFuture.completedFuture(new Reading(Optional.of(doc), true))
        : fetchDiscovery(uri, index + 1, failedSoFar || !((Boolean) o)));
  }

  /** The budgets the client tracks. */
  public Budgets budgets() {
    return budgets;
  }

  Ticker ticker() {
    return ticker;
  }

  Scheduler scheduler() {
    return scheduler;
  }

  private static IOException unwrap(Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    if (t instanceof IOException) {
      return (IOException) t;
    }
    if (t instanceof RuntimeException) {
      throw (RuntimeException) t;
    }
    if (t instanceof Error) {
      throw (Error) t;
    }
    if (t instanceof InterruptedException) {
      Thread.currentThread().interrupt();
      return new InterruptedIOException(t.getMessage());
    }
    return new IOException(t);
  }

  /** Builds a {@link HeadroomClient}. */
  public static final class Builder {
    private final HttpClient http;
    /** The budget engine's settings (clock, waits, pacing, ceilings, retries, scope): one home, ClientBudget's. */
    private final ClientBudget.Builder engineSettings = ClientBudget.builder();
    private final List<Interceptor> interceptors = new ArrayList<>();
    private final List<Interceptor> networkInterceptors = new ArrayList<>();
    private boolean followGuidance;
    private boolean discoverLimits;
    private int maxRefusalBytes = RefusalReader.DEFAULT_MAX_BYTES;
    private Duration discoveryTtl = Duration.ofHours(1);
    private VendClientOptions vend;
    private ClientBudget engine;

    private Builder(HttpClient http) {
      this.http = Objects.requireNonNull(http, "http");
    }

    /** The clock; exists for testing ({@link dev.headroom.ManualTicker}). {@link Ticker#system()} by default. */
    public Builder ticker(Ticker ticker) {
      engineSettings.ticker(ticker);
      return this;
    }

    /** How to wait; {@link Scheduler#system()} by default, {@link Scheduler#advancing} in tests. */
    public Builder scheduler(Scheduler scheduler) {
      engineSettings.scheduler(scheduler);
      return this;
    }

    /** {@link Pacing#ADAPTIVE} by default. */
    public Builder pacing(Pacing pacing) {
      engineSettings.pacing(pacing);
      return this;
    }

    public Builder ceilings(Ceilings ceilings) {
      engineSettings.ceilings(ceilings);
      return this;
    }

    public Builder retry(RetryPolicy retry) {
      engineSettings.retry(retry);
      return this;
    }

    /**
     * Which requests share budgets: the origin by default. A client acting for several users of one
     * API can scope by origin and credential (hashed) so that each user's quota is tracked apart.
     */
    public Builder scope(Function<HttpRequest, String> scope) {
      engineSettings.scope(scope);
      return this;
    }

    /**
     * What each request is expected to cost besides one request ({@link RequestCost}), for the
     * requests sent without a cost of their own; none by default.
     */
    public Builder cost(Function<HttpRequest, RequestCost> cost) {
      engineSettings.cost(cost);
      return this;
    }

    /** Adds an interceptor that sees each call once, before retries. */
    public Builder addInterceptor(Interceptor interceptor) {
      interceptors.add(Objects.requireNonNull(interceptor, "interceptor"));
      return this;
    }

    /** Adds an interceptor that sees each attempt, after pacing admitted it, just before the network. */
    public Builder addNetworkInterceptor(Interceptor interceptor) {
      networkInterceptors.add(Objects.requireNonNull(interceptor, "interceptor"));
      return this;
    }

    /** Whether a refused GET or HEAD follows same-origin {@code cachedResultUrl} or {@code alternativeEndpoint}; off by default. */
    public Builder followGuidance(boolean follow) {
      this.followGuidance = follow;
      return this;
    }

    /** Whether the first request to an origin waits for its discovery document; off by default. */
    public Builder discoverLimits(boolean discover) {
      this.discoverLimits = discover;
      return this;
    }

    /**
     * How long a discovery reading is used before it is read again: 1 minute to 1 day; 1 hour by
     * default. A read that failed (no answer, 5xx, 408, 425, 429, a body cut at the size bound) is
     * tried again after a minute instead, so that one outage does not leave the client without
     * the document for the whole TTL.
     */
    public Builder discoveryTtl(Duration ttl) {
      Objects.requireNonNull(ttl, "discoveryTtl");
      if (ttl.compareTo(Duration.ofMinutes(1)) < 0 || ttl.compareTo(Duration.ofDays(1)) > 0) {
        throw new IllegalArgumentException("discoveryTtl: expected 1 minute to 1 day, got " + ttl);
      }
      this.discoveryTtl = ttl;
      return this;
    }

    /** Largest refusal body read, from 1 KiB to 1 MiB; {@link RefusalReader#DEFAULT_MAX_BYTES} by default. */
    public Builder maxRefusalBytes(int max) {
      if (max < 1024 || max > (1 << 20)) {
        throw new IllegalArgumentException("maxRefusalBytes: expected 1024 to 1048576, got " + max);
      }
      this.maxRefusalBytes = max;
      return this;
    }

    /**
     * Turns on the vend rate-limit extension for vend calls (see {@link VendClientOptions}): pacing
     * by the extension data per scope, {@code RATE_LIMITED} recognised and, if the options say so,
     * retried with the seed's backoff. Off by default; other requests are unaffected either way.
     */
    public Builder vend(VendClientOptions options) {
      this.vend = Objects.requireNonNull(options, "vend");
      return this;
    }

    /**
     * Shares a budget engine with other front ends (OkHttp, Spring, HttpClient 5 adapters, other
     * clients), so that all of them see one budget. Its ticker, scheduler, pacing, ceilings, scope
     * and retry policy are used instead of this builder's. Not combinable with {@link #vend}.
     */
    public Builder budget(ClientBudget engine) {
      this.engine = Objects.requireNonNull(engine, "budget");
      return this;
    }

    /** @throws IllegalStateException when both {@link #budget} and {@link #vend} were given */
    public HeadroomClient build() {
      if (engine != null && vend != null) {
        throw new IllegalStateException(
            "budget: a shared ClientBudget cannot read the vend extension; build the client without budget(...) to use vend(...)");
      }
      return new HeadroomClient(this);
    }
  }
}
