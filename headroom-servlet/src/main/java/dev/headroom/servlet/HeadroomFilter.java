package dev.headroom.servlet;

import dev.headroom.QuotaLimiter;
import dev.headroom.Ticker;
import dev.headroom.enforcement.Admission;
import dev.headroom.enforcement.GateResponse;
import dev.headroom.enforcement.CapacityReductions;
import dev.headroom.enforcement.Escalation;
import dev.headroom.enforcement.Escalations;
import dev.headroom.enforcement.Gate;
import dev.headroom.enforcement.GateBuilder;
import dev.headroom.enforcement.GateListener;
import dev.headroom.enforcement.GateRequest;
import dev.headroom.enforcement.RouteRules;
import dev.headroom.enforcement.RuntimeLimits;
import dev.headroom.enforcement.Verdict;
import dev.headroom.enforcement.Waiting;
import dev.headroom.enforcement.discovery.LimitsDiscoveryDocument;
import dev.headroom.enforcement.partition.AllowList;
import dev.headroom.enforcement.partition.ClientAddressResolver;
import dev.headroom.enforcement.partition.PartitionKeyDerivation;
import dev.headroom.enforcement.plan.PlanResolver;
import dev.headroom.enforcement.plan.Plans;
import dev.headroom.http.PartitionKeyExposure;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.RefusalFormat;
import dev.headroom.http.body.ServiceErrors;
import dev.headroom.http.headers.FieldRules;
import dev.headroom.http.headers.HeaderDialect;
import dev.headroom.http.headers.RateLimitHeaders;
import dev.headroom.servlet.internal.Completion;
import dev.headroom.servlet.internal.ErrorBodyResponse;
import dev.headroom.servlet.internal.LimitedRequest;
import dev.headroom.servlet.internal.LimitedResponse;
import dev.headroom.servlet.internal.ServletRequestView;
import dev.headroom.vend.VendRoute;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.random.RandomGenerator;

/**
 * Headroom in a Jakarta Servlet 6 application: a filter that applies quota policies to the
 * requests of its gate's routes and tells every caller where it stands.
 *
 * <pre>{@code
 * Gate<HttpServletRequest> gate = Gate.<HttpServletRequest>builder()
 *     .limiter(QuotaLimiter.of(InMemoryStore.builder().build()))
 *     .refusals(LimitRefusals.builder().ticker(Ticker.system())
 *         .defaults(PolicyTexts.builder("Limits keep the service responsive for every caller.").build()).build())
 *     .route(RouteRules.builder("/api/items/{id}").methods("GET").policy(perClient).build())
 *     .discovery("Items API", "Catalogue of items.")
 *     .build();
 * HeadroomFilter filter = HeadroomFilter.builder(gate).build();
 * servletContext.addFilter("headroom", filter).setAsyncSupported(true);
 * }</pre>
 *
 * <p>The enforcement itself is headroom-enforcement's {@link Gate}, which every front end shares
 * (routes, listener and store-failure mode included); this filter turns servlet requests into
 * {@link GateRequest}s and writes what the gate decides. {@link #builder()} is a shortcut that
 * takes the gate's settings too and builds the gate first; a {@link Route} there is a gate route
 * with a condition on the servlet request.
 *
 * <h2>One request (ARCHITECTURE.md, "One request through any front end")</h2>
 * <ol>
 * <li>{@code GET}/{@code HEAD} of a discovery path ({@code /.well-known/limits}, {@code /api/limits})
 *   is answered from the {@link LimitsDiscoveryDocument}, with a strong ETag, {@code Cache-Control} and 304
 *   for a matching {@code If-None-Match} (Graceful Boundaries section 1, RFC 9110 section 13.1.2).
 * <li>The first route whose methods and path template match, and whose condition (if any) accepts
 *   the request, decides the policies; a request matching none passes untouched.
 * <li>Each policy's partition key is derived from its {@code partitioning} (headroom-http
 *   {@link PartitionKeyDerivation}); the user comes from the host's {@link UserResolver}.
 * <li>One store call decides every policy at once.
 * <li>Refused: the status of the refusal (429; 413 when the request can never fit), the RateLimit
 *   fields in the route's dialects and Retry-After (headroom-http {@link RateLimitHeaders}), and one
 *   body that is RFC 9457 problem details and a Graceful Boundaries refusal, as HTML when the
 *   caller prefers it (headroom-http {@link LimitRefusals}, {@link RefusalFormat}).
 * <li>Allowed: the application runs; the RateLimit fields are added when its response is about to
 *   be committed (first write, flush, {@code sendError}, {@code sendRedirect}, asynchronous
 *   {@code complete()}, or the end of the request), for the status it set, so status rules such as
 *   {@link Builder#omitOnRedirect(boolean)} apply (draft-09 section 6). When the response
 *   completes, synchronously or through {@code AsyncListener}, content bytes actually written and
 *   kept are charged (none for HEAD) and concurrency leases released.
 * </ol>
 *
 * <h2>Beyond the quota (the gateway's behaviour, defined once in headroom-http)</h2>
 * <ul>
 * <li>Escalation ({@link Builder#escalation}): a partition that keeps sending while told to wait is
 *   blocked and told {@code abnormal-usage-detected} (draft-09 section 5.3; headroom-http
 *   {@link Escalations}).
 * <li>Run-time capacity ({@link #reduceCapacity}): a policy lowered by an operator refuses with 503
 *   {@code temporary-reduced-capacity} (draft-09 section 5.2; headroom-http {@link CapacityReductions}),
 *   its plans' versions with it.
 * <li>Allow lists ({@link Builder#allow}): callers that bypass a policy (headroom-http {@link AllowList}).
 * <li>A store that cannot decide, with {@link Gate.StoreFailureMode#REFUSE}: 503
 *   {@code temporary-reduced-capacity} with the Retry-After every front end sends
 *   ({@link ServiceErrors#storeUnavailable}).
 * <li>Error bodies ({@link Builder#errorBodies}, opt-in): the application's and the container's
 *   {@code sendError} and uncaught exceptions answered with Graceful Boundaries bodies (section 6).
 * </ul>
 *
 * <h2>Waiting instead of refusing</h2>
 * When the gate has queues ({@link Gate#queues()}, headroom-enforcement's {@code Waiting}: a
 * request a policy refuses with a short Retry-After waits for its turn), the filter decides through
 * {@link Gate#decideAsync} and holds no thread while a request waits: a verdict not ready at once
 * starts asynchronous processing, the container's thread returns, and the verdict, when it comes, is
 * written on an {@code ASYNC} dispatch of the same request ({@link AsyncContext#dispatch()}). The
 * filter must therefore be registered with {@code asyncSupported} and for the {@code ASYNC}
 * dispatcher type (the Spring Boot starter does both); on a request that does not support
 * asynchronous processing it decides as without queues, and a refusal is the answer at once. A
 * filter after this one that skips asynchronous dispatches (Spring's {@code OncePerRequestFilter}
 * does by default) does not run for a request that waited: order such filters before this one.
 * Without queues, the filter decides on the request's thread ({@link Gate#decide}), as always.
 *
 * <p>Only the initial {@link DispatcherType#REQUEST} dispatch is limited; forwards, includes, error
 * and async dispatches of an already decided request pass. Register the filter with
 * {@code asyncSupported} so that asynchronous applications work behind it, and for the
 * {@code ASYNC} dispatcher type too when the application dispatches asynchronously: an async
 * dispatch that writes no content then still gets its fields.
 *
 * <p>Immutable and thread-safe.
 */
public final class HeadroomFilter implements Filter {

  /** The conventional discovery paths (Graceful Boundaries section 1). */
  public static final List<String> DEFAULT_DISCOVERY_PATHS = Gate.DEFAULT_DISCOVERY_PATHS;

  private final Gate<HttpServletRequest> gate;
  private final UserResolver users;
  private final boolean allowOnStoreFailure;
  private final boolean errorBodies;
  private final List<CompiledVend> vendRoutes;
  /** The longest {@code maxWait} of the gate's queues; null when no policy has one (nothing waits). */
  private final Duration longestWait;

  private HeadroomFilter(Builder b, Gate<HttpServletRequest> gate, List<CompiledVend> vend) {
    this.gate = gate;
    this.longestWait = gate.queues().values().stream().map(Waiting::maxWait).max(Duration::compareTo).orElse(null);
    this.users = b.users;
    this.allowOnStoreFailure = gate.storeFailureMode() == Gate.StoreFailureMode.ALLOW;
    this.errorBodies = b.errorBodies;
    this.vendRoutes = List.copyOf(vend);
  }

  /**
   * Starts a configuration of the gate and the filter at once: the gate's settings (headroom-enforcement
   * {@link GateBuilder}: routes, policies, listener, store-failure mode, ...) through this builder,
   * which builds the {@link Gate} at {@link Builder#build()} and then the filter exactly as
   * {@link #builder(Gate)} does. A shortcut for applications that configure only this filter.
   */
  public static Builder builder() {
    return new Builder(null);
  }

  /**
   * Starts a filter that writes what {@code gate} decides, as the WebFlux filter does: the gate
   * (routes with their conditions, policies, plans, listener, store-failure mode) is built with
   * headroom-http's {@link Gate#builder()}, the one configuration every front end shares; this
   * builder adds only what a servlet filter has (the user resolver, vend routes, error bodies), and
   * refuses a gate setting at {@link Builder#build()}.
   */
  public static Builder builder(Gate<HttpServletRequest> gate) {
    return new Builder(Objects.requireNonNull(gate, "gate"));
  }

  /** The enforcement this filter writes: headroom-http's {@link Gate}. */
  public Gate<HttpServletRequest> gate() {
    return gate;
  }

  /**
   * Lowers (or, with 1, restores) a policy's capacity at run time, as the gateway's admin
   * {@code POST /capacity} does ({@link Gate#reduceCapacity}; headroom-http
   * {@link CapacityReductions}). Thread-safe.
   *
   * @throws IllegalArgumentException when no route has a policy of this name, or the factor is not in (0, 1]
   */
  public void reduceCapacity(String policy, double factor) {
    gate.reduceCapacity(policy, factor);
  }

  /** The factor of every policy whose capacity is reduced now, by name. */
  public Map<String, Double> reducedCapacity() {
    return gate.reducedCapacity();
  }

  /** The limits in force, changeable at run time without a restart ({@link RuntimeLimits}). */
  public RuntimeLimits limits() {
    return gate.limits();
  }

  /** The discovery document served, when discovery is on. */
  public Optional<LimitsDiscoveryDocument> discovery() {
    return gate.discovery();
  }

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
    if (req.getDispatcherType() == DispatcherType.ASYNC) {
      QueuedRequest waited = req instanceof HttpServletRequest r ? QueuedRequest.take(r) : null;
      if (waited != null) {
        HttpServletRequest request = (HttpServletRequest) req;
        write(request, (HttpServletResponse) res, chain, pathWithinApplication(request), waited.verdict());
        return;
      }
      FilterChains.asyncDispatch(req, res, chain);
      return;
    }
    if (!(req instanceof HttpServletRequest) || !(res instanceof HttpServletResponse)
        || req.getDispatcherType() != DispatcherType.REQUEST) {
      chain.doFilter(req, res);
      return;
    }
    HttpServletRequest request = (HttpServletRequest) req;
    HttpServletResponse response = (HttpServletResponse) res;
    String method = request.getMethod();
    String path = pathWithinApplication(request);
    String origin = null;
    URI originUri = gate.refusals().origin().orElse(null);
    for (CompiledVend v : vendRoutes) {
      if (v.route().matches(method, path)) { // vend calls are POSTs: never a discovery request
        VendCalls.serve(request, response, chain, v.route(), v.headers(), users, allowOnStoreFailure, originUri);
        return;
      }
    }
    GateRequest view = new ServletRequestView(request, path, null, users::user);
    if (longestWait == null || !request.isAsyncSupported()) {
      write(request, response, chain, path, gate.decide(view, request)); // nothing waits
      return;
    }
    CompletableFuture<Verdict> verdict = gate.decideAsync(view, request).toCompletableFuture();
    if (!verdict.isDone()) {
      // waiting in a queue (or for the store): the thread goes back to the container meanwhile
      QueuedRequest.start(request, response, verdict, longestWait, originUri);
      return;
    }
    write(request, response, chain, path, QueuedRequest.join(verdict));
  }

  /** Does what the gate decided: writes its answer, or runs the application. */
  private void write(HttpServletRequest request, HttpServletResponse response, FilterChain chain, String path,
      Verdict verdict) throws IOException, ServletException {
    switch (verdict.kind()) {
      case ANSWER -> RefusalResponses.write(request, response, verdict.answer());
      case UNDECIDED -> chain.doFilter(request, response);
      case PASS -> {
        ErrorBodyResponse errors = errorBodies ? errorBodies(request, response, path) : null;
        FilterChains.run(chain, request, errors == null ? response : errors, errors);
      }
      default -> admitted(request, response, chain, path, verdict.admission());
    }
  }

  private ErrorBodyResponse errorBodies(HttpServletRequest request, HttpServletResponse response, String path) {
    return new ErrorBodyResponse(request, response, path, gate.discoveryPath().orElse(null),
        gate.refusals().origin().orElse(null));
  }

  /** An allowed request: the application runs; fields at commit; completion at the end. */
  private void admitted(HttpServletRequest request, HttpServletResponse response, FilterChain chain, String path,
      Admission admission) throws IOException, ServletException {
    LimitedResponse limitedResponse = new LimitedResponse(response,
        status -> admission.writeFields(status, response::addHeader), admission.chargesContent());
    Completion completion = new Completion(admission, limitedResponse,
        admission.chargesContent() ? limitedResponse : null);
    LimitedRequest limited = new LimitedRequest(request, limitedResponse, completion);
    try {
      ErrorBodyResponse limitedErrors = errorBodies ? errorBodies(request, limitedResponse, path) : null;
      FilterChains.run(chain, limited, limitedErrors == null ? limitedResponse : limitedErrors, limitedErrors);
      if (!completion.isAsync() && request.isAsyncStarted()) {
        // The application started asynchronous processing on an unwrapped request.
        completion.asyncStarted();
        request.getAsyncContext().addListener(completion);
      }
      if (!request.isAsyncStarted()) {
        // Nothing committed the response yet (no content, no flush): the status is final now.
        limitedResponse.commitFields();
      }
    } finally {
      if (!completion.isAsync()) {
        completion.finish();
      }
    }
  }

  /** The decoded, normalised path inside the application, as the container mapped it. */
  static String pathWithinApplication(HttpServletRequest request) {
    String servletPath = request.getServletPath();
    String pathInfo = request.getPathInfo();
    String path = (servletPath == null ? "" : servletPath) + (pathInfo == null ? "" : pathInfo);
    return path.isEmpty() ? "/" : path;
  }

  /** A vend route and its header writer. */
  private record CompiledVend(VendRoute route, RateLimitHeaders headers) {}

  /**
   * Configures a {@link HeadroomFilter}: headroom-http's {@link GateBuilder} settings, plus what
   * only a servlet filter has (the user resolver, vend routes, error bodies). {@link #build()}
   * validates everything at once. Not thread-safe.
   */
  public static final class Builder {
    private final GateBuilder<HttpServletRequest> gate = Gate.builder();
    /** The gate the filter writes, when it was handed one built ({@link HeadroomFilter#builder(Gate)}). */
    private final Gate<HttpServletRequest> built;
    /** The first gate setting made here, which a filter handed a built gate refuses. */
    private String gateSetting;
    private final List<VendRoute> vendRoutes = new ArrayList<>();
    private UserResolver users = UserResolver.principal();
    private boolean errorBodies;

    private Builder(Gate<HttpServletRequest> built) {
      this.built = built;
    }

    /** The gate's settings, noting the first one made here ({@code name}), which {@link #build()} checks. */
    private GateBuilder<HttpServletRequest> settings(String name) {
      if (gateSetting == null) {
        gateSetting = name;
      }
      return gate;
    }

    /**
     * Applies settings to the gate directly (headroom-http {@link GateBuilder}): how a host that
     * configures several front ends alike (the Spring Boot starter) sets them once.
     */
    public Builder gate(Consumer<GateBuilder<HttpServletRequest>> settings) {
      settings.accept(settings("gate"));
      return this;
    }

    /**
     * {@link GateBuilder#allow}: callers that bypass a policy (headroom-http {@link AllowList}, the
     * gateway's {@code allow}), neither counted nor refused by it; a plan's version of the policy
     * follows its list.
     */
    public Builder allow(String policy, AllowList allow) {
      settings("allow").allow(policy, allow);
      return this;
    }

    /** Plans resolved per request within {@code deadline}; built with {@link Plans#of}. */
    public Builder plans(Plans plans, PlanResolver resolver, Duration deadline) {
      settings("plans").plans(plans, resolver, deadline);
      return this;
    }

    /** Required: decides every request, through its store. */
    public Builder limiter(QuotaLimiter limiter) {
      settings("limiter").limiter(limiter);
      return this;
    }

    /** Required: the refusal texts of every policy (and the clock of {@code windowResetAt}). */
    public Builder refusals(LimitRefusals refusals) {
      settings("refusals").refusals(refusals);
      return this;
    }

    /** A route; routes match in the order added. */
    public Builder route(Route route) {
      Objects.requireNonNull(route, "route");
      settings("route").route(route.rules(), route.condition());
      return this;
    }

    /**
     * A vend route (seed 003, the vend rate-limit extension): its POSTs are vend calls, decided per
     * vend scope before the routes are matched ({@link VendRoute}).
     */
    public Builder vendRoute(VendRoute route) {
      vendRoutes.add(Objects.requireNonNull(route, "vendRoute"));
      return this;
    }

    /** Routes, in matching order. */
    public Builder routes(Collection<Route> routes) {
      routes.forEach(this::route);
      return this;
    }

    /** {@link GateBuilder#dialects}: the header dialects of routes that choose none; {@code ietf} by default. */
    public Builder dialects(Collection<HeaderDialect> dialects) {
      settings("dialects").dialects(dialects);
      return this;
    }

    /** {@link GateBuilder#exposure}: what is sent as {@code pk} in the ietf dialect; nothing by default. */
    public Builder exposure(PartitionKeyExposure exposure) {
      settings("exposure").exposure(exposure);
      return this;
    }

    /** {@link GateBuilder#clientAddresses}: how {@code client-ip} partitions find the client. */
    public Builder clientAddresses(ClientAddressResolver resolver) {
      settings("clientAddresses").clientAddresses(resolver);
      return this;
    }

    /** Who the user of {@code user} partitions is; the container's principal by default. */
    public Builder users(UserResolver users) {
      this.users = Objects.requireNonNull(users, "users");
      return this;
    }

    /**
     * {@link GateBuilder#listener}: observes decisions (metrics, logs), told the {@link RouteRules}
     * of each; none by default.
     */
    public Builder listener(GateListener listener) {
      settings("listener").listener(listener);
      return this;
    }

    /**
     * {@link GateBuilder#meterRegistry}: records the gate's meters (decisions by policy, outcome and
     * problem, store latency and failures, shadow outcomes, leases held; headroom-enforcement
     * {@code HeadroomMeters}) in {@code registry}. None by default, and then nothing is recorded.
     */
    public Builder meterRegistry(io.micrometer.core.instrument.MeterRegistry registry) {
      settings("meterRegistry").meterRegistry(registry);
      return this;
    }

    /**
     * {@link GateBuilder#observationRegistry}: each decided request is an {@code Observation}
     * ({@code headroom.decision}) in {@code registry}, a child of the server's own observation of
     * the request when there is one. None by default.
     */
    public Builder observationRegistry(io.micrometer.observation.ObservationRegistry registry) {
      settings("observationRegistry").observationRegistry(registry);
      return this;
    }

    /** {@link GateBuilder#storeFailureMode}: what to do when the store fails; allow by default. */
    public Builder storeFailureMode(Gate.StoreFailureMode mode) {
      settings("storeFailureMode").storeFailureMode(mode);
      return this;
    }

    /** {@link GateBuilder#ticker}: the clock of epoch-seconds {@code X-RateLimit-Reset}. */
    public Builder ticker(Ticker ticker) {
      settings("ticker").ticker(ticker);
      return this;
    }

    /**
     * {@link GateBuilder#omitOnRedirect}: leaves the RateLimit fields off 3xx responses of the
     * application (draft-09 section 6); off by default. The fields are written when the response is
     * committed, so the status is the one the application set.
     */
    public Builder omitOnRedirect(boolean omit) {
      settings("omitOnRedirect").omitOnRedirect(omit);
      return this;
    }

    /** {@link GateBuilder#onlyNearExhaustion} (draft-09 section 6.2). */
    public Builder onlyNearExhaustion(double threshold) {
      settings("onlyNearExhaustion").onlyNearExhaustion(threshold);
      return this;
    }

    /** {@link GateBuilder#capRemainingToResetRatio} (draft-09 sections 6 and 8.5). */
    public Builder capRemainingToResetRatio(double factor, Duration minWindow) {
      settings("capRemainingToResetRatio").capRemainingToResetRatio(factor, minWindow);
      return this;
    }

    /** {@link GateBuilder#fields}: the field rules of every route that does not set its own. */
    public Builder fields(FieldRules fields) {
      settings("fields").fields(fields);
      return this;
    }

    /** {@link GateBuilder#escalation} (draft-09 section 5.3; headroom-http {@link Escalations}). */
    public Builder escalation(String policy, Escalation escalation) {
      settings("escalation").escalation(policy, escalation);
      return this;
    }

    /**
     * Answers the application's and the container's errors ({@code sendError}: 404, 405, 500, ...;
     * an exception let through before anything was sent) with the Graceful Boundaries body every
     * front end sends for that status (headroom-http {@link ServiceErrors#forStatus}; Graceful
     * Boundaries section 6), instead of the container's error page. Off by default: a plain servlet
     * application opts in; the Spring Boot starter answers through Spring's error controller instead.
     */
    public Builder errorBodies(boolean on) {
      this.errorBodies = on;
      return this;
    }

    /** {@link GateBuilder#jitter(Duration)} (draft-09 section 8.5). */
    public Builder jitter(Duration max) {
      settings("jitter").jitter(max);
      return this;
    }

    /** {@link GateBuilder#jitter(Duration, RandomGenerator)}. */
    public Builder jitter(Duration max, RandomGenerator random) {
      settings("jitter").jitter(max, random);
      return this;
    }

    /** Serves the discovery document for this service; off until called. */
    public Builder discovery(String service, String description) {
      settings("discovery").discovery(service, description);
      return this;
    }

    /** Adds changelog, feed or extensions to the discovery document. */
    public Builder discoveryCustomizer(Consumer<LimitsDiscoveryDocument.Builder> customizer) {
      settings("discoveryCustomizer").discoveryCustomizer(customizer);
      return this;
    }

    /** Where the discovery document is served; {@link #DEFAULT_DISCOVERY_PATHS} by default. */
    public Builder discoveryPaths(Collection<String> paths) {
      settings("discoveryPaths").discoveryPaths(paths);
      return this;
    }

    /**
     * Validates and builds.
     *
     * @throws IllegalArgumentException naming the field, the value and what is expected
     */
    public HeadroomFilter build() {
      if (built != null && gateSetting != null) {
        throw new IllegalArgumentException(gateSetting + ": set on the gate, which was built already"
            + " (HeadroomFilter.builder(Gate)); expected it on Gate.builder() instead");
      }
      Gate<HttpServletRequest> built = this.built == null ? gate.build() : this.built;
      List<CompiledVend> vend = new ArrayList<>();
      for (VendRoute v : vendRoutes) {
        vend.add(new CompiledVend(v, built.headersFor(v.dialects())));
      }
      return new HeadroomFilter(this, built, vend);
    }
  }
}
