package dev.headroom.servlet;

import dev.headroom.Acquisition;
import dev.headroom.Decision;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.QuotaLimiter;
import dev.headroom.StoreException;
import dev.headroom.Ticker;
import dev.headroom.http.HeaderNames;
import dev.headroom.http.PartitionKeyExposure;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.ProblemType;
import dev.headroom.http.body.Refusal;
import dev.headroom.http.body.RefusalFormat;
import dev.headroom.http.discovery.DiscoveryRoute;
import dev.headroom.http.discovery.EntityTag;
import dev.headroom.http.discovery.LimitsDiscoveryDocument;
import dev.headroom.http.headers.HeaderDialect;
import dev.headroom.http.headers.RateLimitHeaders;
import dev.headroom.http.partition.ClientAddressResolver;
import dev.headroom.http.partition.PartitionKeyDerivation;
import dev.headroom.http.partition.PartitionKeyExposures;
import dev.headroom.servlet.internal.Completion;
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
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
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
    /** Refuse with 503 and a Graceful Boundaries body: enforcement over availability. */
    REFUSE
  }

  private final QuotaLimiter limiter;
  private final LimitRefusals refusals;
  private final List<CompiledRoute> routes;
  private final UserResolver users;
  private final DecisionListener listener;
  private final StoreFailureMode storeFailureMode;
  private final LimitsDiscoveryDocument discovery;
  private final byte[] discoveryJson;
  private final Set<String> discoveryPaths;

  private HeadroomFilter(Builder b, List<CompiledRoute> routes, LimitsDiscoveryDocument discovery) {
    this.limiter = b.limiter;
    this.refusals = b.refusals;
    this.routes = List.copyOf(routes);
    this.users = b.users;
    this.listener = b.listener;
    this.storeFailureMode = b.storeFailureMode;
    this.discovery = discovery;
    this.discoveryJson = discovery == null ? null : discovery.toJsonBytes();
    this.discoveryPaths = Set.copyOf(b.discoveryPaths);
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

  /** The discovery document served, when discovery is on. */
  public Optional<LimitsDiscoveryDocument> discovery() {
    return Optional.ofNullable(discovery);
  }

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
    if (req.getDispatcherType() == DispatcherType.ASYNC) {
      asyncDispatch(req, res, chain);
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
    CompiledRoute route = match(request, method, path);
    if (route == null) {
      chain.doFilter(req, res);
      return;
    }
    ServletRequestView view = new ServletRequestView(request, path, route.route.template(), users::user);
    List<Acquisition> acquisitions = new ArrayList<>(route.policies.size());
    for (int i = 0; i < route.policies.size(); i++) {
      QuotaPolicy p = route.policies.get(i);
      // content-bytes are charged after the fact; the request itself asks for nothing but is
      // refused while the partition is in debt.
      acquisitions.add(Acquisition.of(p, route.derivations.get(i).derive(view), p.unit() == QuotaUnit.CONTENT_BYTES ? 0 : 1));
    }
    Decision decision;
    try {
      decision = limiter.acquire(acquisitions);
    } catch (StoreException e) {
      notifyFailure(route.route, e);
      if (storeFailureMode == StoreFailureMode.ALLOW) {
        chain.doFilter(req, res);
      } else {
        refuseUnavailable(request, response);
      }
      return;
    }
    try {
      listener.decided(route.route, decision);
    } catch (RuntimeException ignored) {
      // A listener cannot fail the request (DecisionListener contract).
    }
    if (!decision.allowed()) {
      refuse(request, response, route, decision);
      return;
    }
    // content bytes: none are transferred for HEAD (RFC 9110 section 9.3.2), so none are charged.
    boolean charge = route.countsBytes && !method.equals("HEAD");
    LimitedResponse limitedResponse = new LimitedResponse(response,
        status -> route.headers.write(decision, status, response::addHeader), charge);
    Completion completion = new Completion(limiter, decision, charge ? limitedResponse : null, e -> notifyFailure(route.route, e));
    LimitedRequest limited = new LimitedRequest(request, limitedResponse, completion);
    try {
      chain.doFilter(limited, limitedResponse);
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

  /**
   * An asynchronous dispatch of a limited request: when it ends without starting another
   * asynchronous cycle, the container completes the response, so fields not yet written are
   * written now.
   */
  private static void asyncDispatch(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    chain.doFilter(req, res);
    if (!req.isAsyncStarted()) {
      LimitedResponse limited = LimitedResponse.find(res);
      if (limited != null) {
        limited.commitFields();
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

  private void refuse(HttpServletRequest request, HttpServletResponse response, CompiledRoute route, Decision decision)
      throws IOException {
    Refusal refusal = refusals.refusal(decision, ProblemType.QUOTA_EXCEEDED);
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
      refusal = agreeing(refusal, written.get().getSeconds());
    }
    RefusalFormat format = RefusalFormat.negotiate(request.getHeader("Accept"));
    String self = request.getRequestURI() + (request.getQueryString() == null ? "" : "?" + request.getQueryString());
    writeBody(request, response, format, format.body(refusal, format == RefusalFormat.HTML ? self : null));
  }

  /**
   * The refusal as it agrees with the Retry-After actually written, which jitter may have moved
   * later than the decision's (draft-09 sections 6 and 8.5): {@code retryAfterSeconds}, the reset
   * instant and the "Try again in" sentence of the detail move with it.
   */
  static Refusal agreeing(Refusal refusal, long retryAfterSeconds) {
    long decided = refusal.retryAfterSeconds().getAsLong();
    if (decided == retryAfterSeconds) {
      return refusal;
    }
    Refusal.Builder b = refusal.toBuilder().retryAfterSeconds(retryAfterSeconds);
    refusal.windowResetAt().ifPresent(at -> b.windowResetAt(at.plusSeconds(retryAfterSeconds - decided)));
    String sentence = "Try again in " + seconds(decided) + ".";
    refusal.detail().filter(d -> d.endsWith(sentence)).ifPresent(d ->
        b.detail(d.substring(0, d.length() - sentence.length()) + "Try again in " + seconds(retryAfterSeconds) + "."));
    return b.build();
  }

  private static String seconds(long n) {
    return n == 1 ? "1 second" : n + " seconds";
  }

  private void refuseUnavailable(HttpServletRequest request, HttpServletResponse response) throws IOException {
    Refusal refusal = Refusal.builder(503)
        .error("limiter_unavailable")
        .detail("The service cannot check its limits right now and refuses requests until it can. Try again in 5 seconds.")
        .why("Requests are held back rather than admitted unchecked so that the service stays within its capacity.")
        .retryAfterSeconds(5)
        .origin(refusals.origin().orElse(null))
        .build();
    response.setStatus(503);
    response.setHeader(HeaderNames.RETRY_AFTER, "5");
    RefusalFormat format = RefusalFormat.negotiate(request.getHeader("Accept"));
    writeBody(request, response, format, format.body(refusal, null));
  }

  /** Bytes of a refused request's body read and dropped so that its connection can stay open. */
  static final int SWALLOW_BYTES = 64 * 1024;

  /**
   * A refused request's body is not for the application: up to {@link #SWALLOW_BYTES} of it are
   * read and dropped so that the connection can carry the next request, and a larger or
   * unreadable one ends the connection ({@code Connection: close}, RFC 9112 section 9.6). A
   * container that finds content unread after a committed response closes the connection without
   * being able to say so, and a client that reuses it meanwhile finds it gone.
   */
  static void settleUnreadBody(HttpServletRequest request, HttpServletResponse response) {
    long declared = request.getContentLengthLong();
    if (declared == 0 || declared < 0 && request.getHeader("Transfer-Encoding") == null) {
      return;
    }
    if (declared > SWALLOW_BYTES) {
      response.setHeader("Connection", "close");
      return;
    }
    try {
      java.io.InputStream in = request.getInputStream();
      byte[] buf = new byte[8192];
      long n = 0;
      int r;
      while ((r = in.read(buf)) >= 0) {
        n += r;
        if (n > SWALLOW_BYTES) {
          response.setHeader("Connection", "close");
          return;
        }
      }
    } catch (IOException | IllegalStateException e) {
      response.setHeader("Connection", "close");
    }
  }

  private static void writeBody(HttpServletRequest request, HttpServletResponse response, RefusalFormat format, byte[] body)
      throws IOException {
    settleUnreadBody(request, response);
    response.setContentType(format.mediaType());
    response.setHeader("Cache-Control", "no-store");
    response.addHeader("Vary", "Accept");
    response.setContentLength(body.length);
    if (!request.getMethod().equals("HEAD")) {
      response.getOutputStream().write(body);
    }
  }

  private void serveDiscovery(HttpServletRequest request, HttpServletResponse response) throws IOException {
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

  /** A route with what each request needs precomputed. */
  private static final class CompiledRoute {
    final Route route;
    final List<QuotaPolicy> policies;
    final List<PartitionKeyDerivation> derivations;
    final RateLimitHeaders headers;
    final boolean countsBytes;

    CompiledRoute(Route route, List<PartitionKeyDerivation> derivations, RateLimitHeaders headers) {
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
    private Set<HeaderDialect> dialects = EnumSet.of(HeaderDialect.IETF);
    private PartitionKeyExposure exposure = PartitionKeyExposures.off();
    private ClientAddressResolver clientAddresses = ClientAddressResolver.direct();
    private UserResolver users = UserResolver.principal();
    private DecisionListener listener = DecisionListener.none();
    private StoreFailureMode storeFailureMode = StoreFailureMode.ALLOW;
    private Ticker ticker = Ticker.system();
    private boolean omitOnRedirect;
    private double nearExhaustion;
    private Duration jitter = Duration.ZERO;
    private RandomGenerator jitterRandom;
    private String service;
    private String description;
    private Consumer<LimitsDiscoveryDocument.Builder> discoveryCustomizer = b -> {};
    private final Set<String> discoveryPaths = new LinkedHashSet<>(DEFAULT_DISCOVERY_PATHS);

    private Builder() {}

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
      RateLimitHeaders.builder().onlyNearExhaustion(threshold); // validates, naming the field
      this.nearExhaustion = threshold;
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
      RateLimitHeaders.builder().jitter(max, random); // validates, naming the field
      this.jitter = max;
      this.jitterRandom = random;
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
      Map<String, QuotaPolicy> byName = new HashMap<>();
      List<CompiledRoute> compiled = new ArrayList<>();
      for (Route r : routes) {
        List<PartitionKeyDerivation> derivations = new ArrayList<>();
        for (QuotaPolicy p : r.policies()) {
          QuotaPolicy other = byName.putIfAbsent(p.name(), p);
          if (other != null && !other.equals(p)) {
            throw new IllegalArgumentException("route " + r.template() + ": policy '" + p.name() + "' is defined twice "
                + "differently (" + other + " and " + p + "); expected one definition per name");
          }
          try {
            derivations.add(PartitionKeyDerivation.parse(p.partitioning().orElse("global"), clientAddresses));
          } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("route " + r.template() + ": policy '" + p.name() + "': " + e.getMessage(), e);
          }
        }
        RateLimitHeaders headers;
        try {
          RateLimitHeaders.Builder h = RateLimitHeaders.builder().dialects(r.dialects().orElse(dialects)).exposure(exposure)
              .ticker(ticker).omitOnRedirect(omitOnRedirect).jitter(jitter, jitterRandom).policies(r.policies());
          if (nearExhaustion > 0) {
            h.onlyNearExhaustion(nearExhaustion);
          }
          headers = h.build();
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException("route " + r.template() + ": " + e.getMessage(), e);
        }
        compiled.add(new CompiledRoute(r, derivations, headers));
      }
      LimitsDiscoveryDocument doc = null;
      if (service != null || description != null) {
        LimitsDiscoveryDocument.Builder d = LimitsDiscoveryDocument.builder(service, description).texts(refusals::texts).proactiveHeaders(true);
        refusals.origin().ifPresent(d::origin);
        for (Route r : routes) {
          List<String> methods = r.methods().isEmpty() ? List.of("ANY") : List.copyOf(r.methods());
          for (String m : methods) {
            DiscoveryRoute.Builder dr = DiscoveryRoute.builder(m, r.template()).listed(r.listed());
            r.policies().forEach(dr::policy);
            if (r.key().isPresent()) {
              dr.key(methods.size() == 1 ? r.key().get() : r.key().get() + "-" + m.toLowerCase(java.util.Locale.ROOT));
            }
            r.note().ifPresent(dr::note);
            d.route(dr.build());
          }
        }
        discoveryCustomizer.accept(d);
        doc = d.build();
      }
      return new HeadroomFilter(this, compiled, doc);
    }
  }
}
