package dev.headroom.servlet;

import dev.headroom.Acquisition;
import dev.headroom.Decision;
import dev.headroom.PolicyOutcome;
import dev.headroom.Partitioning;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.QuotaLimiter;
import dev.headroom.StoreException;
import dev.headroom.Ticker;
import dev.headroom.http.HeaderNames;
import dev.headroom.http.PartitionKeyExposure;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.plan.Plan;
import dev.headroom.http.plan.PlanResolver;
import dev.headroom.http.plan.Plans;
import dev.headroom.http.body.ProblemType;
import dev.headroom.http.body.Refusal;
import dev.headroom.http.body.RefusalFormat;
import dev.headroom.http.body.ServiceErrors;
import dev.headroom.http.discovery.DiscoveryRoute;
import dev.headroom.http.discovery.EntityTag;
import dev.headroom.http.discovery.LimitsDiscoveryDocument;
import dev.headroom.http.enforcement.CapacityReductions;
import dev.headroom.http.enforcement.Escalation;
import dev.headroom.http.enforcement.Escalations;
import dev.headroom.http.headers.FieldOptions;
import dev.headroom.http.headers.HeaderDialect;
import dev.headroom.http.headers.RateLimitHeaders;
import dev.headroom.http.partition.AllowList;
import dev.headroom.http.partition.ClientAddressResolver;
import dev.headroom.http.partition.PartitionKeyDerivation;
import dev.headroom.http.partition.PartitionKeyExposures;
import dev.headroom.PartitionKey;
import dev.headroom.servlet.internal.Completion;
import dev.headroom.servlet.internal.ErrorBodyResponse;
import dev.headroom.servlet.internal.LimitedRequest;
import dev.headroom.servlet.internal.LimitedResponse;
import dev.headroom.servlet.internal.ServletRequestView;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.random.RandomGenerator;

/**
 * Headroom in a Jakarta Servlet 6 application: a filter that applies quota policies to the
 * requests of its {@link Route}s and tells every caller where it stands.
 *
 * <pre>{@code
 * HeadroomFilter filter = HeadroomFilter.builder()
 *     .limiter(QuotaLimiter.of(InMemoryStore.builder().build()))
 *     .refusals(LimitRefusals.builder().ticker(Ticker.system())
 *         .defaults(PolicyTexts.builder("Limits keep the service responsive for every caller.").build()).build())
 *     .route(Route.builder("/api/items/{id}").methods("GET").policy(perClient).build())
 *     .discovery("Items API", "Catalogue of items.")
 *     .build();
 * servletContext.addFilter("headroom", filter).setAsyncSupported(true);
 * }</pre>
 *
 * <h2>One request (DESIGN.md, "One request through the gateway", applied in-process)</h2>
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
 * <li>A store that cannot decide, with {@link StoreFailureMode#REFUSE}: 503
 *   {@code temporary-reduced-capacity} with the Retry-After every front end sends
 *   ({@link ServiceErrors#storeUnavailable}).
 * <li>Error bodies ({@link Builder#errorBodies}, opt-in): the application's and the container's
 *   {@code sendError} and uncaught exceptions answered with Graceful Boundaries bodies (section 6).
 * </ul>
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
  public static final List<String> DEFAULT_DISCOVERY_PATHS = List.of("/.well-known/limits", "/api/limits");

  /** What to do when the store cannot decide. */
  public enum StoreFailureMode {
    /** Let the request through without RateLimit fields: availability over enforcement. */
    ALLOW,
    /**
     * Refuse with 503 {@code temporary-reduced-capacity} and the Retry-After every front end sends
     * ({@link ServiceErrors#storeUnavailable}): enforcement over availability.
     */
    REFUSE
  }

  private final QuotaLimiter limiter;
  private final LimitRefusals refusals;
  private final List<CompiledRoute> routes;
  private final UserResolver users;
  private final DecisionListener listener;
  private final StoreFailureMode storeFailureMode;
  /** Builds the discovery document again when limits change at run time; null when discovery is off. */
  private final FilterDiscovery discoveryFactory;
  private volatile LimitsDiscoveryDocument discovery;
  private final RuntimeLimits limits;
  /** The plans and their resolver; null without plans. */
  private final PlanSelection plans;
  private final AllowLists allows;
  private final Set<String> discoveryPaths;
  /** The first discovery path configured, named in error bodies; null without discovery. */
  private final String discoveryPath;
  private final Map<String, Escalation> escalationsByPolicy;
  private final Escalations escalations = new Escalations();
  private final CapacityReductions capacity = new CapacityReductions();
  private final Map<String, QuotaPolicy> policiesByName;
  private final Ticker ticker;
  private final boolean errorBodies;
  private final List<CompiledVend> vendRoutes;

  private HeadroomFilter(Builder b, List<CompiledRoute> routes, FilterDiscovery discovery, List<CompiledVend> vend,
      RuntimeLimits limits) {
    this.plans = b.plans;
    this.allows = new AllowLists(b.allowLists, b.clientAddresses);
    this.limits = limits;
    this.discoveryFactory = discovery;
    this.vendRoutes = List.copyOf(vend);
    this.limiter = b.limiter;
    this.refusals = b.refusals;
    this.routes = List.copyOf(routes);
    this.users = b.users;
    this.listener = b.listener;
    this.storeFailureMode = b.storeFailureMode;
    limits.onChange(this::rebuildDiscovery);
    rebuildDiscovery();
    this.discoveryPaths = Set.copyOf(b.discoveryPaths);
    this.discoveryPath = discovery == null ? null : b.discoveryPaths.iterator().next();
    this.escalationsByPolicy = Map.copyOf(b.escalations);
    Map<String, QuotaPolicy> byName = new HashMap<>();
    routes.forEach(r -> r.policies.forEach(p -> byName.put(p.name(), p)));
    this.policiesByName = Map.copyOf(byName);
    this.ticker = b.ticker;
    this.errorBodies = b.errorBodies;
  }

  /** Starts a configuration. */
  public static Builder builder() {
    return new Builder();
  }

  /** The routes, in matching order. */
  public List<Route> routes() {
    List<Route> list = new ArrayList<>(routes.size());
    routes.forEach(r -> list.add(r.route));
    return list;
  }

  /**
   * Lowers (or, with 1, restores) a policy's capacity at run time, as the gateway's admin
   * {@code POST /capacity} does: the policy is enforced with quota {@code max(1, floor(q * factor))}
   * on the same counters, and its refusals are 503 {@code temporary-reduced-capacity} (draft-09
   * section 5.2) until restored. Thread-safe.
   *
   * @throws IllegalArgumentException when no route has a policy of this name, or the factor is not in (0, 1]
   */
  public void reduceCapacity(String policy, double factor) {
    QuotaPolicy p = policiesByName.get(policy);
    if (p == null) {
      throw new IllegalArgumentException("policy: '" + policy + "' is not a policy of any route; expected one of "
          + new java.util.TreeSet<>(policiesByName.keySet()));
    }
    capacity.set(p, factor);
  }

  /** The factor of every policy whose capacity is reduced now, by name. */
  public Map<String, Double> reducedCapacity() {
    return capacity.factors();
  }

  /** The limits in force, changeable at run time without a restart ({@link RuntimeLimits}). */
  public RuntimeLimits limits() {
    return limits;
  }

  private void rebuildDiscovery() {
    discovery = discoveryFactory == null ? null : discoveryFactory.build(limits::effective);
  }

  /** The discovery document served, when discovery is on. */
  public Optional<LimitsDiscoveryDocument> discovery() {
    return Optional.ofNullable(discovery);
  }

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
    if (req.getDispatcherType() == DispatcherType.ASYNC) {
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
    if (discovery != null && (method.equals("GET") || method.equals("HEAD")) && discoveryPaths.contains(path)) {
      serveDiscovery(request, response);
      return;
    }
    ErrorBodyResponse errors = errorBodies ? new ErrorBodyResponse(request, response, path,
        discoveryPath, refusals.origin().orElse(null)) : null;
    for (CompiledVend v : vendRoutes) {
      if (v.route().matches(method, path)) {
        VendCalls.serve(request, response, chain, v.route(), v.headers(), users,
            storeFailureMode == StoreFailureMode.ALLOW, refusals.origin().orElse(null));
        return;
      }
    }
    CompiledRoute route = match(request, method, path);
    if (route == null) {
      FilterChains.run(chain, request, errors == null ? response : errors, errors);
      return;
    }
    ServletRequestView view = new ServletRequestView(request, path, route.route.template(), users::user);
    Plan plan = plans == null ? null : plans.choose(request, response, view, refusals.origin().orElse(null));
    if (plans != null && plan == null) {
      return; // refused with 401: an invalid credential
    }
    OptionalLong cost = ShadowAndCost.cost(request, response, route.route, refusals.origin().orElse(null));
    if (cost.isEmpty()) {
      return; // refused with 400: the cost header is not valid
    }
    List<PolicyOutcome> shadowFields = ShadowAndCost.shadows(limiter, route.route, route.shadowDerivations, view,
        cost.getAsLong(), listener, allows);
    List<Acquisition> acquisitions = new ArrayList<>(route.policies.size());
    List<PartitionKey> keys = new ArrayList<>(route.policies.size());
    long now = escalationsByPolicy.isEmpty() ? 0 : ticker.read();
    for (int i = 0; i < route.policies.size(); i++) {
      if (allows.bypasses(route.policies.get(i).name(), view)) {
        continue; // the caller is on the policy's allow list
      }
      QuotaPolicy base = limits.effective(route.policies.get(i));
      QuotaPolicy p = capacity.effective(plan == null ? base : plans.plans().policy(plan, base), base.name());
      PartitionKey key = route.derivations.get(i).derive(view);
      keys.add(key);
      long blocked = escalationsByPolicy.containsKey(p.name()) ? escalations.blockedFor(p.name(), key, now) : 0;
      if (blocked > 0) {
        refuseBlocked(request, response, route, p, Escalations.seconds(blocked));
        return;
      }
      // content-bytes are charged after the fact; the request itself asks for nothing but is
      // refused while the partition is in debt.
      acquisitions.add(Acquisition.of(p, key, ShadowAndCost.units(p, cost.getAsLong())));
    }
    if (acquisitions.isEmpty()) {
      FilterChains.run(chain, request, errors == null ? response : errors, errors); // every policy bypassed
      return;
    }
    Decision decision;
    try {
      decision = limiter.acquire(acquisitions);
    } catch (StoreException e) {
      notifyFailure(route.route, e);
      if (storeFailureMode == StoreFailureMode.ALLOW) {
        chain.doFilter(req, res);
      } else {
        RefusalResponses.unavailable(request, response, refusals.origin().orElse(null));
      }
      return;
    }
    try {
      listener.decided(route.route, decision);
    } catch (RuntimeException ignored) {
      // A listener cannot fail the request (DecisionListener contract).
    }
    if (!decision.allowed()) {
      refuse(request, response, route, decision, keys);
      return;
    }
    // content bytes: none are transferred for HEAD (RFC 9110 section 9.3.2), so none are charged.
    boolean charge = route.countsBytes && !method.equals("HEAD");
    LimitedResponse limitedResponse = new LimitedResponse(response,
        status -> route.headers.write(ShadowAndCost.withShadowFields(decision, shadowFields), status, response::addHeader),
        charge);
    Completion completion = new Completion(limiter, decision, charge ? limitedResponse : null, e -> notifyFailure(route.route, e));
    completion.refundUnless(route.route.counting()::counts, acquisitions, limitedResponse);
    LimitedRequest limited = new LimitedRequest(request, limitedResponse, completion);
    try {
      ErrorBodyResponse limitedErrors = errors == null ? null : new ErrorBodyResponse(request, limitedResponse, path,
          discoveryPath, refusals.origin().orElse(null));
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

  private void notifyFailure(Route route, StoreException e) {
    try {
      listener.storeFailed(route, e);
    } catch (RuntimeException ignored) {
      // A listener cannot fail the request (DecisionListener contract).
    }
  }

  private CompiledRoute match(HttpServletRequest request, String method, String path) {
    for (CompiledRoute r : routes) {
      if (r.route.matches(method, path) && r.route.accepts(request)) {
        return r;
      }
    }
    return null;
  }

  /** The decoded, normalised path inside the application, as the container mapped it. */
  static String pathWithinApplication(HttpServletRequest request) {
    String servletPath = request.getServletPath();
    String pathInfo = request.getPathInfo();
    String path = (servletPath == null ? "" : servletPath) + (pathInfo == null ? "" : pathInfo);
    return path.isEmpty() ? "/" : path;
  }

  /** A partition blocked by an escalation: refused without asking the store (draft-09 section 5.3). */
  private void refuseBlocked(HttpServletRequest request, HttpServletResponse response, CompiledRoute route,
      QuotaPolicy policy, long seconds) throws IOException {
    Refusal refusal = refusals.abnormal(policy, seconds, List.of(policy.name()));
    response.setStatus(refusal.status());
    response.setHeader(HeaderNames.RETRY_AFTER, Long.toString(seconds));
    RefusalFormat format = RefusalFormat.negotiate(request.getHeader("Accept"));
    RefusalResponses.writeBody(request, response, format, format.body(refusal, format == RefusalFormat.HTML ? RefusalResponses.self(request) : null));
  }

  private void refuse(HttpServletRequest request, HttpServletResponse response, CompiledRoute route, Decision decision,
      List<PartitionKey> keys) throws IOException {
    PolicyOutcomeView worst = escalate(route, decision, keys);
    Refusal refusal;
    if (worst.blockSeconds > 0) {
      refusal = refusals.abnormal(worst.policy, Math.max(worst.blockSeconds, decision.retryAfterSeconds()),
          refusals.refusal(decision).violatedPolicies());
    } else {
      String worstName = decision.mostConstraining().policy().name();
      refusal = refusals.refusal(decision, capacity.isReduced(worstName, plans == null ? worstName : plans.plans().baseName(worstName))
          ? ProblemType.TEMPORARY_REDUCED_CAPACITY : ProblemType.QUOTA_EXCEEDED);
    }
    int status = refusal.status();
    response.setStatus(status);
    BiConsumer<String, String> sink = response::addHeader;
    if (refusal.retryAfterSeconds().isEmpty()) {
      // 413: waiting cannot help, so no Retry-After is promised.
      sink = (name, value) -> {
        if (!name.equals(HeaderNames.RETRY_AFTER)) {
          response.addHeader(name, value);
        }
      };
    }
    Optional<Duration> written = route.headers.write(decision, status, sink);
    if (written.isPresent() && refusal.retryAfterSeconds().isPresent()) {
      long wait = Math.max(written.get().getSeconds(), refusal.retryAfterSeconds().getAsLong());
      if (wait != written.get().getSeconds()) {
        response.setHeader(HeaderNames.RETRY_AFTER, Long.toString(wait)); // an escalation's block outlasts t
      }
      refusal = refusals.agreeing(refusal, wait);
    }
    RefusalFormat format = RefusalFormat.negotiate(request.getHeader("Accept"));
    RefusalResponses.writeBody(request, response, format, format.body(refusal, format == RefusalFormat.HTML ? RefusalResponses.self(request) : null));
  }

  /** The escalating policy a refusal blocks, if any, and for how long (whole seconds). */
  private record PolicyOutcomeView(QuotaPolicy policy, long blockSeconds) {}

  /**
   * Counts a refusal towards each violated policy's escalation (headroom-http {@link Escalations});
   * the policy whose escalation this refusal starts, with its block, or none.
   */
  private PolicyOutcomeView escalate(CompiledRoute route, Decision decision, List<PartitionKey> keys) {
    if (escalationsByPolicy.isEmpty()) {
      return new PolicyOutcomeView(null, 0);
    }
    long now = ticker.read();
    PolicyOutcomeView out = new PolicyOutcomeView(null, 0);
    for (dev.headroom.PolicyOutcome o : decision.violated()) {
      Escalation e = escalationsByPolicy.get(o.policy().name());
      if (e == null) {
        continue;
      }
      int i = decision.outcomes().indexOf(o);
      long block = escalations.onRefused(o.policy().name(), e, keys.get(i), now, o.retryAfter().toNanos());
      if (block > 0 && Escalations.seconds(block) > out.blockSeconds) {
        out = new PolicyOutcomeView(o.policy(), Escalations.seconds(block));
      }
    }
    return out;
  }

  private void serveDiscovery(HttpServletRequest request, HttpServletResponse response) throws IOException {
    LimitsDiscoveryDocument discovery = this.discovery;
    byte[] discoveryJson = discovery.toJsonBytes();
    response.setHeader("ETag", discovery.etag());
    response.setHeader("Cache-Control", LimitsDiscoveryDocument.cacheControl());
    if (EntityTag.matchesIfNoneMatch(request.getHeader("If-None-Match"), discovery.etag())) {
      response.setStatus(HttpServletResponse.SC_NOT_MODIFIED);
      return;
    }
    response.setStatus(HttpServletResponse.SC_OK);
    response.setContentType("application/json");
    response.setContentLength(discoveryJson.length);
    if (!request.getMethod().equals("HEAD")) {
      response.getOutputStream().write(discoveryJson);
    }
  }

  /** A vend route and its header writer. */
  private record CompiledVend(VendRoute route, RateLimitHeaders headers) {}

  /** A route with what each request needs precomputed. */
  private static final class CompiledRoute {
    final Route route;
    final List<QuotaPolicy> policies;
    final List<PartitionKeyDerivation> derivations;
    final List<PartitionKeyDerivation> shadowDerivations;
    final RateLimitHeaders headers;
    final boolean countsBytes;

    CompiledRoute(Route route, List<PartitionKeyDerivation> derivations, List<PartitionKeyDerivation> shadowDerivations,
        RateLimitHeaders headers) {
      this.shadowDerivations = List.copyOf(shadowDerivations);
      this.route = route;
      this.policies = route.policies();
      this.derivations = List.copyOf(derivations);
      this.headers = headers;
      this.countsBytes = route.policies().stream().anyMatch(p -> p.unit() == QuotaUnit.CONTENT_BYTES);
    }
  }

  /** Configures a {@link HeadroomFilter}; {@link #build()} validates everything at once. Not thread-safe. */
  public static final class Builder {
    private QuotaLimiter limiter;
    private LimitRefusals refusals;
    private final List<Route> routes = new ArrayList<>();
    private final List<VendRoute> vendRoutes = new ArrayList<>();
    private Set<HeaderDialect> dialects = EnumSet.of(HeaderDialect.IETF);
    private PartitionKeyExposure exposure = PartitionKeyExposures.off();
    private ClientAddressResolver clientAddresses = ClientAddressResolver.direct();
    private UserResolver users = UserResolver.principal();
    private DecisionListener listener = DecisionListener.none();
    private StoreFailureMode storeFailureMode = StoreFailureMode.ALLOW;
    private Ticker ticker = Ticker.system();
    private boolean omitOnRedirect;
    private FieldOptions fields = FieldOptions.none();
    private final Map<String, Escalation> escalations = new HashMap<>();
    private boolean errorBodies;
    private String service;
    private String description;
    private Consumer<LimitsDiscoveryDocument.Builder> discoveryCustomizer = b -> {};
    private final Set<String> discoveryPaths = new LinkedHashSet<>(DEFAULT_DISCOVERY_PATHS);

    private PlanSelection plans;
    private final Map<String, AllowList> allowLists = new HashMap<>();
    private Builder() {}

    /**
     * Callers that bypass a policy (headroom-http {@link AllowList}, the gateway's {@code allow}):
     * neither counted nor refused by it; a CIDR block is matched against the client address as
     * {@link #clientAddresses} resolves it. A plan's version of the policy follows its list.
     */
    public Builder allow(String policy, AllowList allow) {
      allowLists.put(Objects.requireNonNull(policy, "policy"), Objects.requireNonNull(allow, "allow"));
      return this;
    }

    /** Plans resolved per request within {@code deadline} ({@link PlanSelection}); built with {@link Plans#of}. */
    public Builder plans(Plans plans, PlanResolver resolver, Duration deadline) {
      this.plans = new PlanSelection(plans, resolver, deadline);
      return this;
    }

    /** Required: decides every request, through its store. */
    public Builder limiter(QuotaLimiter limiter) {
      this.limiter = limiter;
      return this;
    }

    /** Required: the refusal texts of every policy (and the clock of {@code windowResetAt}). */
    public Builder refusals(LimitRefusals refusals) {
      this.refusals = refusals;
      return this;
    }

    /** A route; routes match in the order added. */
    public Builder route(Route route) {
      routes.add(Objects.requireNonNull(route, "route"));
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

    /** The header dialects of routes that choose none; {@code ietf} by default. */
    public Builder dialects(Collection<HeaderDialect> dialects) {
      if (dialects == null || dialects.isEmpty() || dialects.stream().anyMatch(Objects::isNull)) {
        throw new IllegalArgumentException("dialects: expected at least one of ietf, draft-07, draft-06, draft-03, "
            + "x-ratelimit, got " + dialects);
      }
      this.dialects = EnumSet.copyOf(dialects);
      return this;
    }

    /** What is sent as {@code pk} in the ietf dialect; nothing by default. */
    public Builder exposure(PartitionKeyExposure exposure) {
      this.exposure = Objects.requireNonNull(exposure, "exposure");
      return this;
    }

    /** How {@code client-ip} partitions find the client (trusted proxies); the direct peer by default. */
    public Builder clientAddresses(ClientAddressResolver resolver) {
      this.clientAddresses = Objects.requireNonNull(resolver, "clientAddresses");
      return this;
    }

    /** Who the user of {@code user} partitions is; the container's principal by default. */
    public Builder users(UserResolver users) {
      this.users = Objects.requireNonNull(users, "users");
      return this;
    }

    /** Observes decisions (metrics); none by default. */
    public Builder listener(DecisionListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /** What to do when the store fails; {@link StoreFailureMode#ALLOW} by default. */
    public Builder storeFailureMode(StoreFailureMode mode) {
      this.storeFailureMode = Objects.requireNonNull(mode, "storeFailureMode");
      return this;
    }

    /** The clock of epoch-seconds {@code X-RateLimit-Reset}; the system clock by default. */
    public Builder ticker(Ticker ticker) {
      this.ticker = Objects.requireNonNull(ticker, "ticker");
      return this;
    }

    /**
     * Leaves the RateLimit fields off 3xx responses of the application (draft-09 section 6: a low
     * remaining quota on a redirect can stall a client that follows it); off by default. The fields
     * are written when the response is committed, so the status is the one the application set.
     */
    public Builder omitOnRedirect(boolean omit) {
      this.omitOnRedirect = omit;
      return this;
    }

    /**
     * Writes the RateLimit fields of allowed requests only when some policy's utilisation
     * (1 - r/q) reaches {@code threshold} (draft-09 section 6.2); refusals always carry them. Off
     * by default.
     *
     * @throws IllegalArgumentException unless {@code 0 < threshold <= 1}
     */
    public Builder onlyNearExhaustion(double threshold) {
      this.fields = fields.onlyNearExhaustion(threshold);
      return this;
    }

    /**
     * Caps {@code r / t} at {@code factor} times each policy's nominal throughput {@code q / w},
     * for policies whose window is at least {@code minWindow} (draft-09 sections 6 and 8.5: a
     * token bucket just refilled otherwise invites a burst). Off by default; a route's own
     * {@link Route.Builder#fields} wins.
     *
     * @throws IllegalArgumentException unless {@code factor >= 1} and {@code minWindow} is not negative
     */
    public Builder capRemainingToResetRatio(double factor, Duration minWindow) {
      this.fields = fields.capRemainingToResetRatio(factor, minWindow);
      return this;
    }

    /**
     * The field rules of every route that does not set its own, option by option
     * ({@link Route.Builder#fields}); what {@link #jitter}, {@link #onlyNearExhaustion} and
     * {@link #capRemainingToResetRatio} set one by one.
     */
    public Builder fields(FieldOptions fields) {
      this.fields = Objects.requireNonNull(fields, "fields");
      return this;
    }

    /**
     * Escalates a policy (Graceful Boundaries section 2, "Retry behavior guidance"; draft-09 section
     * 5.3): {@code threshold} refusals of one partition while it is told to wait block it for
     * {@code block}, answered 429 {@code abnormal-usage-detected} without asking the store, as the
     * gateway's {@code policies.*.escalation} does. None by default.
     *
     * @throws IllegalArgumentException when the escalation is not valid
     */
    public Builder escalation(String policy, Escalation escalation) {
      escalations.put(Objects.requireNonNull(policy, "policy"), Objects.requireNonNull(escalation, "escalation"));
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

    /**
     * Adds zero to {@code max} whole seconds, drawn once per response, to every {@code t} and to
     * Retry-After, so that clients refused together do not all return at the same second (draft-09
     * section 8.5); the refusal body's {@code retryAfterSeconds} is the Retry-After written. None by
     * default.
     *
     * @throws IllegalArgumentException unless {@code max} is whole seconds from 0 to
     *     {@link RateLimitHeaders#MAX_JITTER}
     */
    public Builder jitter(Duration max) {
      return jitter(max, null);
    }

    /** As {@link #jitter(Duration)}, drawing from {@code random} (seed it for reproducible tests). */
    public Builder jitter(Duration max, RandomGenerator random) {
      this.fields = fields.jitter(max, random);
      return this;
    }

    /** Serves the discovery document for this service; off until called. */
    public Builder discovery(String service, String description) {
      this.service = service;
      this.description = description;
      return this;
    }

    /** Adds changelog, feed or extensions to the discovery document. */
    public Builder discoveryCustomizer(Consumer<LimitsDiscoveryDocument.Builder> customizer) {
      this.discoveryCustomizer = Objects.requireNonNull(customizer, "discoveryCustomizer");
      return this;
    }

    /** Where the discovery document is served; {@link #DEFAULT_DISCOVERY_PATHS} by default. */
    public Builder discoveryPaths(Collection<String> paths) {
      if (paths == null || paths.isEmpty()) {
        throw new IllegalArgumentException("discoveryPaths: expected at least one path such as /.well-known/limits, got " + paths);
      }
      for (String p : paths) {
        if (p == null || !p.startsWith("/") || p.length() > 256) {
          throw new IllegalArgumentException("discoveryPaths: expected paths starting with /, got "
              + (p == null ? "null" : "'" + p + "'"));
        }
      }
      discoveryPaths.clear();
      discoveryPaths.addAll(paths);
      return this;
    }

    /**
     * Validates and builds.
     *
     * @throws IllegalArgumentException naming the field, the value and what is expected
     */
    public HeadroomFilter build() {
      if (limiter == null) {
        throw new IllegalArgumentException("limiter: required, the QuotaLimiter that decides requests; got nothing");
      }
      if (refusals == null) {
        throw new IllegalArgumentException("refusals: required, the LimitRefusals with the texts of every policy; got nothing");
      }
      Map<String, QuotaPolicy> byName = new java.util.LinkedHashMap<>();
      List<CompiledRoute> compiled = new ArrayList<>();
      for (Route r : routes) {
        List<PartitionKeyDerivation> derivations = new ArrayList<>();
        for (QuotaPolicy p : r.policies()) {
          QuotaPolicy other = byName.putIfAbsent(p.name(), p);
          if (other != null && !other.equals(p)) {
            throw new IllegalArgumentException("route " + r.template() + ": policy '" + p.name() + "' is defined twice "
                + "differently (" + other + " and " + p + "); expected one definition per name");
          }
          derivations.add(PartitionKeyDerivation.of(p.partitioning().orElse(Partitioning.GLOBAL), clientAddresses));
        }
        RateLimitHeaders headers;
        try {
          headers = r.fields().merge(fields).applyTo(RateLimitHeaders.builder()).dialects(r.dialects().orElse(dialects))
              .exposure(exposure).ticker(ticker).omitOnRedirect(omitOnRedirect).policies(r.policies()).build();
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException("route " + r.template() + ": " + e.getMessage(), e);
        }
        List<PartitionKeyDerivation> shadowDerivations = new ArrayList<>();
        for (QuotaPolicy p : r.shadowPolicies()) {
          shadowDerivations.add(PartitionKeyDerivation.of(p.partitioning().orElse(Partitioning.GLOBAL), clientAddresses));
        }
        compiled.add(new CompiledRoute(r, derivations, shadowDerivations, headers));
      }
      Set<String> names = new HashSet<>(byName.keySet());
      routes.forEach(r -> r.shadowPolicies().forEach(p -> names.add(p.name())));
      new AllowLists(allowLists, clientAddresses).check(names);
      for (String name : escalations.keySet()) {
        if (!byName.containsKey(name)) {
          throw new IllegalArgumentException("escalation: policy '" + name + "' is not a policy of any route; expected one of "
              + new java.util.TreeSet<>(byName.keySet()));
        }
      }
      FilterDiscovery doc = service == null && description == null ? null
          : new FilterDiscovery(service, description, refusals, List.copyOf(routes),
              plans == null ? null : plans.plans(), List.copyOf(byName.values()), discoveryCustomizer);
      List<CompiledVend> vend = new ArrayList<>();
      for (VendRoute v : vendRoutes) {
        vend.add(new CompiledVend(v, fields.applyTo(RateLimitHeaders.builder()).dialects(v.dialects().orElse(dialects))
            .exposure(exposure).ticker(ticker).build()));
      }
      return new HeadroomFilter(this, compiled, doc, vend, new RuntimeLimits(byName, plans == null ? null : plans.plans()));
    }
  }
}
