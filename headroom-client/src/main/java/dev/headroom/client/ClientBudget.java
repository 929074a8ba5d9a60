package dev.headroom.client;

import dev.headroom.Ticker;
import dev.headroom.http.HeaderNames;
import dev.headroom.http.body.RefusalReader;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.stream.Stream;
import javax.net.ssl.SSLSession;

/**
 * The client's budget engine, for any HTTP transport: the budgets, pacing and retry decision that
 * {@link HeadroomClient} uses, behind an API that speaks no transport's types. Transport adapters
 * (OkHttp, Spring's RestClient and WebClient, Apache HttpClient 5) are thin shells over it, and a
 * {@link HeadroomClient} built with {@link HeadroomClient.Builder#budget(ClientBudget)} shares it:
 * one instance per application makes every front end see one budget.
 *
 * <p>One exchange through the engine:
 * <ol>
 *   <li>{@link #acquire} (never blocks; for reactive and async transports) or
 *       {@link #acquireBlocking} (blocks the calling thread at most {@link Builder#maxWait}, then
 *       throws {@link BudgetWaitException}) gives a {@link Permit} once the request's budgets
 *       admit it (draft-ietf-httpapi-ratelimit-headers-09 section 7: never more than {@code r}
 *       units before the reset, Retry-After holds the scope).
 *   <li>The transport sends the request; then {@link Permit#record} reports the status and
 *       header fields (and, for a refusal, the first bytes of its body), or {@link Permit#release}
 *       reports that there was no answer (failure or cancellation). Every permit must be reported
 *       exactly once: a permit never reported holds its scope's next probe forever.
 *   <li>For a refusal ({@link #isRefusal}: 429, or 503 with Retry-After), {@link #decide} says
 *       whether to send again and after how long ({@link RetryDecision}).
 * </ol>
 * {@link #execute} and {@link #executeAsync} run that loop for a transport given as a few
 * functions ({@link Transport}, {@link AsyncTransport}); adapters need nothing else.
 *
 * <p>A request costs one unit of each {@code requests} budget; what it is expected to cost in the
 * other units a server meters ({@code tokens}, ...) is a {@link RequestCost}, stated per request
 * ({@link #acquire(HttpRequest, RequestCost)}, {@link #execute(HttpRequest, RequestCost, boolean, Transport)},
 * the integrations' {@link RequestCost#ATTRIBUTE}) or for every request ({@link Builder#cost}).
 *
 * <p>The request is seen as a {@link HttpRequest} without a body ({@link #requestView}): its method,
 * URI and header fields are all the engine reads, and the {@link Builder#scope scope function}
 * gets it. Time comes from the {@link Builder#ticker ticker}, waits from the
 * {@link Builder#scheduler scheduler} ({@link Scheduler#advancing} runs tests in virtual time).
 *
 * <p>Thread-safe.
 */
public final class ClientBudget {

  private final Ticker ticker;
  private final Scheduler scheduler;
  private final Ceilings ceilings;
  private final RetryPolicy retry;
  private final Duration maxWait;
  private final int maxRefusalBytes;
  private final Function<HttpRequest, RequestCost> cost;
  private final BudgetTracker tracker;

  private ClientBudget(Builder b) {
    this.ticker = b.ticker;
    this.scheduler = b.scheduler;
    this.ceilings = b.ceilings;
    this.retry = b.retry;
    this.maxWait = b.maxWait;
    this.maxRefusalBytes = b.maxRefusalBytes;
    this.cost = b.cost;
    this.tracker = new BudgetTracker(b.ticker, b.scheduler, b.pacing, b.ceilings, b.scope, b.vend, b.retry);
  }

  public static Builder builder() {
    return new Builder();
  }

  // ---- the request and response as the engine sees them

  /**
   * The request as the engine sees it: method, URI and header fields, no body. Fields the JDK
   * client does not let a caller set ({@code Host}, {@code Content-Length}, {@code Connection} ...)
   * or that it cannot carry are left out; the engine does not read them.
   *
   * @throws IllegalArgumentException when the method is not a token or the URI is not an absolute
   *     http or https URI
   */
  public static HttpRequest requestView(String method, URI uri, Map<String, ? extends Collection<String>> headers) {
    Objects.requireNonNull(method, "method");
    Objects.requireNonNull(uri, "uri");
    Objects.requireNonNull(headers, "headers");
    HttpRequest.Builder b;
    try {
      b = HttpRequest.newBuilder(uri);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("uri: expected an absolute http or https URI, got " + uri, e);
    }
    try {
      b.method(method, HttpRequest.BodyPublishers.noBody());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("method: expected an HTTP method token, got '" + method + "'", e);
    }
    headers.forEach((name, values) -> {
      if (name == null || values == null) {
        return;
      }
      for (String v : values) {
        if (v == null) {
          continue;
        }
        try {
          b.header(name, v);
        } catch (IllegalArgumentException restrictedOrInvalid) {
          // Not a field the engine reads (Host, Content-Length ...), or not one java.net.http can hold.
          break;
        }
      }
    });
    return b.build();
  }

  /**
   * Whether a response is a refusal the engine handles: a 429 (RFC 6585 section 4); a 503 with
   * Retry-After (RFC 9110 section 15.6.4); or a 403 that says it is a rate limit, with Retry-After
   * or with {@code x-ratelimit-remaining: 0}, as GitHub refuses both its primary and its secondary
   * limits ("Rate limits for the REST API": "you will receive a 403 or 429 response, and the
   * x-ratelimit-remaining header will be 0"; a secondary limit's response carries retry-after). A
   * 403 without either is a permission error and left to the caller.
   */
  public static boolean isRefusal(int status, Map<String, ? extends Collection<String>> headers) {
    if (status == 429) {
      return true;
    }
    if (status != 503 && status != 403) {
      return false;
    }
    boolean retryAfter = false;
    boolean spent = false;
    for (Map.Entry<String, ? extends Collection<String>> e : headers.entrySet()) {
      if (e.getKey() == null || e.getValue() == null || e.getValue().isEmpty()) {
        continue;
      }
      if (e.getKey().equalsIgnoreCase(HeaderNames.RETRY_AFTER)) {
        retryAfter = true;
      } else if (e.getKey().equalsIgnoreCase(HeaderNames.X_RATELIMIT_REMAINING)) {
        spent = e.getValue().stream().anyMatch(v -> v != null && v.trim().equals("0"));
      }
    }
    return retryAfter || (status == 403 && spent);
  }

  // ---- admission and outcome

  /**
   * A future completed with a permit once the request's budgets admit it. Waiting runs on the
   * {@link Scheduler}; no thread is blocked. A caller that stops waiting (cancels, times out) must
   * still release the permit the future brings: {@code f.thenAccept(Permit::release)}.
   */
  public CompletableFuture<Permit> acquire(HttpRequest request) {
    return acquire(request, costOf(request));
  }

  /**
   * {@link #acquire(HttpRequest)} for a request expected to cost {@code cost} besides one request:
   * it waits until every budget it draws on covers it ({@link RequestCost}).
   */
  public CompletableFuture<Permit> acquire(HttpRequest request, RequestCost cost) {
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(cost, "cost");
    return tracker.acquire(request, Set.of(), cost).thenApply(p -> new Permit(request, p));
  }

  /**
   * What {@link Builder#cost the builder's function} says a request is expected to cost; never
   * null ({@link RequestCost#none()} when the function returns null).
   */
  public RequestCost costOf(HttpRequest request) {
    Objects.requireNonNull(request, "request");
    RequestCost c = cost.apply(request);
    return c == null ? RequestCost.none() : c;
  }

  /**
   * A request's cost as an integration finds it under {@link RequestCost#ATTRIBUTE}: the
   * attribute's, when it is one, else {@link #costOf the builder's}.
   *
   * @throws IllegalArgumentException when the attribute is something other than a {@link RequestCost}
   */
  public RequestCost costOf(HttpRequest request, Object attribute) {
    if (attribute == null) {
      return costOf(request);
    }
    if (attribute instanceof RequestCost c) {
      return c;
    }
    throw new IllegalArgumentException(RequestCost.ATTRIBUTE + ": expected a RequestCost, got a "
        + attribute.getClass().getName());
  }

  /**
   * Blocks the calling thread until the request's budgets admit it, at most {@link #maxWait()}.
   *
   * @throws BudgetWaitException when it was not admitted within the max wait (it is then not sent;
   *     should it be admitted later, its permit is released at once)
   * @throws InterruptedIOException when the thread was interrupted (its interrupt flag is set again)
   */
  public Permit acquireBlocking(HttpRequest request) throws IOException {
    return acquireBlocking(request, costOf(request));
  }

  /** {@link #acquireBlocking(HttpRequest)} for a request expected to cost {@code cost} ({@link RequestCost}). */
  public Permit acquireBlocking(HttpRequest request, RequestCost cost) throws IOException {
    CompletableFuture<Permit> f = acquire(request, cost);
    try {
      return f.get(maxWait.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      f.thenAccept(Permit::release);
      throw new BudgetWaitException(request.method(), request.uri(), maxWait);
    } catch (InterruptedException e) {
      f.thenAccept(Permit::release);
      Thread.currentThread().interrupt();
      throw new InterruptedIOException(request.method() + " " + request.uri() + ": interrupted while waiting for the budgets");
    } catch (ExecutionException e) {
      throw rethrow(e.getCause());
    }
  }

  /**
   * The decision after try number {@code tries} (1 for the first) was refused: {@link RetryDecision}.
   * The refusal of a request this engine sent to ask a budget that may be spent (its exchange from
   * {@link Permit#record}) waits its Retry-After as it stands ({@link RetryPolicy#askDelay}); any
   * other waits {@link RetryPolicy#delay} with {@code tries - 1} doublings ({@link #execute} and
   * {@link #executeAsync} count only the call's earlier refusals that were not asks).
   *
   * @param replayable whether the request's body (if any) can be sent again
   * @throws IllegalArgumentException when the exchange is not a refusal or tries is below 1
   */
  public RetryDecision decide(Exchange refused, int tries, boolean replayable) {
    Objects.requireNonNull(refused, "refused");
    if (!refused.isRefused()) {
      throw new IllegalArgumentException("refused: expected a refusal (429, or 503 with Retry-After), got " + refused.status());
    }
    if (tries < 1) {
      throw new IllegalArgumentException("tries: expected 1 or more, got " + tries);
    }
    return decide(refused, tries, tries - 1, replayable);
  }

  /** {@link #decide(Exchange, int, boolean)} when {@code backoffs} of the earlier refusals escalated the back-off. */
  private RetryDecision decide(Exchange refused, int tries, int backoffs, boolean replayable) {
    if (!replayable) {
      return RetryDecision.giveUp(refused, tries, "the request body cannot be sent again");
    }
    return RetryDecision.decide(retry, ceilings, refused.request().method(), refused, tries, backoffs);
  }

  /**
   * Blocks the calling thread for {@code delay}, waiting on the {@link Scheduler} (so a test's
   * {@link Scheduler#advancing} scheduler moves its virtual time instead).
   */
  public void await(Duration delay) throws InterruptedIOException {
    Objects.requireNonNull(delay, "delay");
    CompletableFuture<Void> f = scheduler.delay(delay);
    try {
      f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while waiting " + delay + " to retry");
    } catch (ExecutionException e) {
      throw new IllegalStateException("scheduler: its delay of " + delay + " failed", e.getCause());
    }
  }

  // ---- whole exchanges

  /**
   * One transport's blocking exchange, for {@link #execute}. {@code R} is the transport's response.
   */
  public interface Transport<R> {

    /** Sends the request once (again for a retry). */
    R send() throws IOException;

    int status(R response) throws IOException;

    /** The response's header fields, names in any case. */
    Map<String, ? extends Collection<String>> headers(R response) throws IOException;

    /**
     * Reads at most {@code maxBytes} of a refusal's body and closes the response: a refusal is
     * never handed to the caller (it is retried, or turned into {@link RateLimitedException}).
     */
    byte[] consumeRefusal(R response, int maxBytes) throws IOException;
  }

  /** One transport's non-blocking exchange, for {@link #executeAsync}. */
  public interface AsyncTransport<R> {

    /** Sends the request once (again for a retry); must not block. */
    CompletableFuture<R> send();

    int status(R response);

    Map<String, ? extends Collection<String>> headers(R response);

    /** As {@link Transport#consumeRefusal}, without blocking. */
    CompletableFuture<byte[]> consumeRefusal(R response, int maxBytes);

    /** Frees a response nobody will read (the caller cancelled meanwhile). */
    default void discard(R response) {}
  }

  /**
   * Sends a request through a blocking transport on the calling thread: waits for the budgets
   * ({@link #acquireBlocking}), sends, records, and retries refusals as {@link #decide} says,
   * waiting on the calling thread ({@link #await}).
   *
   * @param request the request's view ({@link #requestView})
   * @param replayable whether the request's body (if any) can be sent again
   * @return the first response that is not a refusal
   * @throws RateLimitedException when a refusal is not retried ({@link BudgetWaitException} when
   *     the budgets did not admit the request within the max wait)
   * @throws IOException as the transport throws it (the permit is released)
   */
  public <R> R execute(HttpRequest request, boolean replayable, Transport<R> transport) throws IOException {
    Objects.requireNonNull(request, "request");
    return execute(request, costOf(request), replayable, transport);
  }

  /** {@link #execute(HttpRequest, boolean, Transport)} for a request expected to cost {@code cost} ({@link RequestCost}). */
  public <R> R execute(HttpRequest request, RequestCost cost, boolean replayable, Transport<R> transport) throws IOException {
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(cost, "cost");
    Objects.requireNonNull(transport, "transport");
    int backoffs = 0;
    for (int tries = 1; ; tries++) {
      Permit permit = acquireBlocking(request, cost);
      R response;
      int status;
      Map<String, ? extends Collection<String>> headers;
      try {
        response = transport.send();
        status = transport.status(response);
        headers = transport.headers(response);
      } catch (IOException | RuntimeException | Error e) {
        permit.release();
        throw e;
      }
      if (!isRefusal(status, headers)) {
        permit.record(status, headers, null);
        return response;
      }
      byte[] body;
      IOException bodyFailure = null;
      try {
        body = transport.consumeRefusal(response, maxRefusalBytes);
      } catch (IOException e) {
        // The status and fields say enough to pace and retry; the failure goes with a give-up.
        body = new byte[0];
        bodyFailure = e;
      } catch (RuntimeException | Error e) {
        permit.release();
        throw e;
      }
      Exchange ex = permit.record(status, headers, body);
      RetryDecision decision = decide(ex, tries, backoffs, replayable);
      if (!decision.retry()) {
        RateLimitedException failure = decision.failure();
        if (bodyFailure != null) {
          failure.addSuppressed(bodyFailure);
        }
        throw failure;
      }
      backoffs += RetryDecision.escalates(ex) ? 1 : 0;
      await(decision.delay());
    }
  }

  /**
   * {@link #execute} without blocking: waits run on the {@link Scheduler}. Cancelling the result
   * stops the exchange: a permit admitted afterwards is released, a response that arrives
   * afterwards is {@link AsyncTransport#discard discarded}.
   */
  public <R> CompletableFuture<R> executeAsync(HttpRequest request, boolean replayable, AsyncTransport<R> transport) {
    Objects.requireNonNull(request, "request");
    return executeAsync(request, costOf(request), replayable, transport);
  }

  /** {@link #executeAsync(HttpRequest, boolean, AsyncTransport)} for a request expected to cost {@code cost} ({@link RequestCost}). */
  public <R> CompletableFuture<R> executeAsync(HttpRequest request, RequestCost cost, boolean replayable,
      AsyncTransport<R> transport) {
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(cost, "cost");
    Objects.requireNonNull(transport, "transport");
    CompletableFuture<R> result = new CompletableFuture<>();
    attempt(request, cost, replayable, transport, 1, 0, result);
    return result;
  }

  /** Try number {@code tries}; {@code backoffs} of the earlier refusals escalated the back-off. */
  private <R> void attempt(HttpRequest request, RequestCost cost, boolean replayable, AsyncTransport<R> transport,
      int tries, int backoffs, CompletableFuture<R> result) {
    if (result.isDone()) {
      return;
    }
    acquire(request, cost).whenComplete((permit, error) -> {
      if (error != null) {
        result.completeExceptionally(cause(error));
        return;
      }
      if (result.isDone()) {
        permit.release();
        return;
      }
      CompletableFuture<R> sent;
      try {
        sent = Objects.requireNonNull(transport.send(), "transport.send() returned null");
      } catch (RuntimeException | Error e) {
        permit.release();
        result.completeExceptionally(e);
        return;
      }
      sent.whenComplete((response, sendError) -> {
        if (sendError != null) {
          permit.release();
          result.completeExceptionally(cause(sendError));
          return;
        }
        int status;
        Map<String, ? extends Collection<String>> headers;
        try {
          status = transport.status(response);
          headers = transport.headers(response);
          if (!isRefusal(status, headers)) {
            permit.record(status, headers, null);
            if (!result.complete(response)) {
              transport.discard(response);
            }
            return;
          }
        } catch (RuntimeException | Error e) {
          permit.release();
          result.completeExceptionally(e);
          return;
        }
        CompletableFuture<byte[]> read;
        try {
          read = Objects.requireNonNull(transport.consumeRefusal(response, maxRefusalBytes),
              "transport.consumeRefusal() returned null");
        } catch (RuntimeException | Error e) {
          read = CompletableFuture.failedFuture(e);
        }
        read.whenComplete((body, readError) -> {
          try {
            Exchange ex = permit.record(status, headers, readError == null && body != null ? body : new byte[0]);
            RetryDecision decision = decide(ex, tries, backoffs, replayable);
            if (!decision.retry()) {
              RateLimitedException failure = decision.failure();
              if (readError != null) {
                failure.addSuppressed(cause(readError));
              }
              result.completeExceptionally(failure);
              return;
            }
            scheduler.delay(decision.delay()).whenComplete((v, delayError) -> {
              if (delayError != null) {
                result.completeExceptionally(cause(delayError));
              } else {
                attempt(request, cost, replayable, transport, tries + 1,
                    backoffs + (RetryDecision.escalates(ex) ? 1 : 0), result);
              }
            });
          } catch (RuntimeException | Error e) {
            result.completeExceptionally(e);
          }
        });
      });
    });
  }

  // ---- what the engine is

  /** The budgets, as {@link HeadroomClient#budgets()} shows them. */
  public Budgets budgets() {
    return tracker;
  }

  public Ticker ticker() {
    return ticker;
  }

  public Scheduler scheduler() {
    return scheduler;
  }

  public Ceilings ceilings() {
    return ceilings;
  }

  public RetryPolicy retryPolicy() {
    return retry;
  }

  /** How long a blocking front end waits for the budgets before it gives up. */
  public Duration maxWait() {
    return maxWait;
  }

  /** How many bytes of a refusal's body are read (to parse problem details and HTML meta). */
  public int maxRefusalBytes() {
    return maxRefusalBytes;
  }

  BudgetTracker tracker() {
    return tracker;
  }

  private static Throwable cause(Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  private static IOException rethrow(Throwable t) {
    t = cause(t);
    if (t instanceof IOException io) {
      return io;
    }
    if (t instanceof RuntimeException re) {
      throw re;
    }
    if (t instanceof Error err) {
      throw err;
    }
    return new IOException(t);
  }

  /**
   * The right to send one request, from {@link #acquire}: report its outcome exactly once with
   * {@link #record} or {@link #release}. Thread-safe.
   */
  public final class Permit {
    private final HttpRequest request;
    private final BudgetTracker.Permit permit;
    private final AtomicBoolean reported = new AtomicBoolean();

    private Permit(HttpRequest request, BudgetTracker.Permit permit) {
      this.request = request;
      this.permit = permit;
    }

    /** The request admitted. */
    public HttpRequest request() {
      return request;
    }

    /**
     * Reports the response the request got, received now (by the engine's ticker): its RateLimit
     * fields and Retry-After update the budgets (a response with {@code Age > 0} is ignored, draft-09
     * section 7.3).
     *
     * @param refusalBody for a refusal, the first bytes of its body (problem details, Graceful
     *     Boundaries JSON, or HTML with {@code <meta name="retry-after">}); null otherwise
     * @return the exchange, for {@link ClientBudget#decide}
     * @throws IllegalStateException when this permit was already reported
     */
    public Exchange record(int status, Map<String, ? extends Collection<String>> headers, byte[] refusalBody) {
      Objects.requireNonNull(headers, "headers");
      if (!reported.compareAndSet(false, true)) {
        throw new IllegalStateException("permit: already reported for " + request.method() + " " + request.uri());
      }
      Exchange ex;
      try {
        Object body = refusalBody == null ? null : new RefusalBody(refusalBody.clone(), false);
        ex = Exchange.of(request, new ResponseView(request, status, fieldsOf(headers), body), ticker.instant());
      } catch (RuntimeException | Error e) {
        tracker.release(permit);
        throw e;
      }
      tracker.record(permit, ex);
      // #decide waits an ask's refusal as it stands (RetryPolicy#askDelay).
      return permit.ask() ? ex.asAsk() : ex;
    }

    /**
     * Reports that the request got no response (the transport failed, or the caller cancelled).
     * Does nothing when the permit was already reported.
     */
    public void release() {
      if (reported.compareAndSet(false, true)) {
        tracker.release(permit);
      }
    }
  }

  private static HttpHeaders fieldsOf(Map<String, ? extends Collection<String>> headers) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    headers.forEach((name, values) -> {
      if (name == null || name.isEmpty() || values == null) {
        return; // a status line's pseudo-entry (HttpURLConnection) or nothing
      }
      List<String> kept = values.stream().filter(Objects::nonNull).toList();
      if (!kept.isEmpty()) {
        out.merge(name.toLowerCase(Locale.ROOT), kept,
            (a, b) -> Stream.concat(a.stream(), b.stream()).toList());
      }
    });
    return HttpHeaders.of(out, (a, b) -> true);
  }

  /** A transport's response as an {@link HttpResponse}, so that {@link Exchange} reads it as the JDK client's. */
  private record ResponseView(HttpRequest request, int statusCode, HttpHeaders headers, Object body)
      implements HttpResponse<Object> {

    @Override
    public Optional<HttpResponse<Object>> previousResponse() {
      return Optional.empty();
    }

    @Override
    public Optional<SSLSession> sslSession() {
      return Optional.empty();
    }

    @Override
    public URI uri() {
      return request.uri();
    }

    @Override
    public HttpClient.Version version() {
      return HttpClient.Version.HTTP_1_1;
    }
  }

  /** Builds a {@link ClientBudget}; every setter validates its argument. */
  public static final class Builder {
    private Ticker ticker = Ticker.system();
    private Scheduler scheduler = Scheduler.system();
    private Pacing pacing = Pacing.ADAPTIVE;
    private Ceilings ceilings = Ceilings.defaults();
    private RetryPolicy retry = RetryPolicy.defaults();
    private Function<HttpRequest, String> scope = r -> Origins.of(r.uri());
    private Duration maxWait = Duration.ofMinutes(2);
    private int maxRefusalBytes = RefusalReader.DEFAULT_MAX_BYTES;
    private Function<HttpRequest, RequestCost> cost = r -> RequestCost.none();
    private VendClientOptions vend;

    private Builder() {}

    /** The clock; {@link Ticker#system()} by default, a {@link dev.headroom.ManualTicker} in tests. */
    public Builder ticker(Ticker ticker) {
      this.ticker = Objects.requireNonNull(ticker, "ticker");
      return this;
    }

    /** How to wait; {@link Scheduler#system()} by default, {@link Scheduler#advancing} in tests. */
    public Builder scheduler(Scheduler scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /** {@link Pacing#ADAPTIVE} by default, as {@link HeadroomClient.Builder}. */
    public Builder pacing(Pacing pacing) {
      this.pacing = Objects.requireNonNull(pacing, "pacing");
      return this;
    }

    public Builder ceilings(Ceilings ceilings) {
      this.ceilings = Objects.requireNonNull(ceilings, "ceilings");
      return this;
    }

    /** {@link RetryPolicy#defaults()} by default. */
    public Builder retry(RetryPolicy retry) {
      this.retry = Objects.requireNonNull(retry, "retry");
      return this;
    }

    /** Which requests share budgets, from their {@link #requestView view}: the origin by default. */
    public Builder scope(Function<HttpRequest, String> scope) {
      this.scope = Objects.requireNonNull(scope, "scope");
      return this;
    }

    /** How long a blocking front end waits for the budgets, 1 ms to 1 day; 2 minutes by default. */
    public Builder maxWait(Duration maxWait) {
      Objects.requireNonNull(maxWait, "maxWait");
      if (maxWait.compareTo(Duration.ofMillis(1)) < 0 || maxWait.compareTo(Duration.ofDays(1)) > 0) {
        throw new IllegalArgumentException("maxWait: expected 1 ms to 1 day, got " + maxWait);
      }
      this.maxWait = maxWait;
      return this;
    }

    /** How much of a refusal's body is read, 1 KiB to 1 MiB; {@link RefusalReader#DEFAULT_MAX_BYTES} by default. */
    public Builder maxRefusalBytes(int max) {
      if (max < 1024 || max > 1 << 20) {
        throw new IllegalArgumentException("maxRefusalBytes: expected 1024 to 1048576, got " + max);
      }
      this.maxRefusalBytes = max;
      return this;
    }

    /**
     * What each request is expected to cost besides one request ({@link RequestCost}), from its
     * {@link #requestView view}, for requests that state no cost of their own; none by default.
     * A null from the function is read as none.
     */
    public Builder cost(Function<HttpRequest, RequestCost> cost) {
      this.cost = Objects.requireNonNull(cost, "cost");
      return this;
    }

    /** The vend extension's options, for a {@link HeadroomClient} that reads them. */
    Builder vend(VendClientOptions vend) {
      this.vend = vend;
      return this;
    }

    public ClientBudget build() {
      return new ClientBudget(this);
    }
  }
}
