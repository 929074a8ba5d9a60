package dev.headroom.spring.cloud.gateway;

import dev.headroom.Acquisition;
import dev.headroom.Decision;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.StoreException;
import dev.headroom.Ticker;
import dev.headroom.enforcement.DecisionMeters;
import dev.headroom.enforcement.partition.PartitionKeyExposures;
import dev.headroom.http.HeaderNames;
import dev.headroom.http.body.ServiceErrors;
import dev.headroom.http.headers.HeaderDialect;
import dev.headroom.http.headers.RateLimitHeaders;
import io.netty.util.concurrent.EventExecutor;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.ratelimit.AbstractRateLimiter;
import org.springframework.cloud.gateway.support.ConfigurationService;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Headroom as the {@link org.springframework.cloud.gateway.filter.ratelimit.RateLimiter} of Spring
 * Cloud Gateway's {@code RequestRateLimiter} filter: a drop-in for {@code RedisRateLimiter} that
 * decides with any Headroom algorithm on any Headroom store, and answers with the IETF RateLimit
 * fields (or another dialect) and, when it refuses, a {@code Retry-After} that agrees with them
 * (draft-ietf-httpapi-ratelimit-headers-09 section 6).
 *
 * <p>Configured the way Spring Cloud Gateway configures rate limiters, per route under
 * {@code spring.cloud.gateway.server.webflux.routes[].filters}, with arguments prefixed
 * {@value #CONFIGURATION_PROPERTY_NAME}:
 *
 * <pre>{@code
 * filters:
 *   - name: RequestRateLimiter
 *     args:
 *       key-resolver: "#{@apiKeyResolver}"
 *       headroom-rate-limiter.quota: 100
 *       headroom-rate-limiter.window: 1m
 *       headroom-rate-limiter.algorithm: token-bucket   # fixed-window (default), sliding-window
 *       headroom-rate-limiter.dialect: ietf              # or ietf-next, draft-09, draft-07, draft-06, draft-03, x-ratelimit; a list
 *       headroom-rate-limiter.cost: 1                    # units each request takes
 * }</pre>
 *
 * <p>or {@code headroom-rate-limiter.policy: NAME} for a policy declared under
 * {@code headroom.cloud-gateway.policies} (an inline policy is named by {@code policy} too, else by
 * the route's id). From the Java DSL:
 * {@code .requestRateLimiter(c -> c.rateLimiter(HeadroomRateLimiter.class, (HeadroomRateLimiter.Config h) -> h.setQuota(100L)))}.
 *
 * <p>The partition is the {@code KeyResolver}'s key, hashed (never kept or published raw). Only
 * {@code requests} policies: a {@code RateLimiter} sees neither the response's end (to release a
 * concurrency lease) nor its bytes; the {@code Headroom} filter does both. {@code RequestRateLimiter}
 * refuses with a bare status; the {@code Headroom} filter answers with Graceful Boundaries bodies.
 *
 * <p>Never blocks: the decision is {@link QuotaLimiter#acquireAsync}, which a Redis store answers on
 * one of the server's own loops ({@code headroom.cloud-gateway.store.redis-event-loops: server},
 * the default), the exchange then resuming on the loop it came from, or, with {@code own}, on an
 * I/O thread of Lettuce's own. A store
 * that cannot decide lets the request through without fields, or, with
 * {@code headroom.cloud-gateway.store.on-failure: refuse}, refuses it with
 * {@code Retry-After: }{@value ServiceErrors#STORE_RETRY_AFTER_SECONDS}.
 *
 * <p>Where the application has a Micrometer {@code MeterRegistry}, the auto-configuration gives this
 * rate limiter the meters every Headroom front end records (headroom-enforcement
 * {@code HeadroomMeters}): {@code headroom.decisions} by policy, outcome and problem,
 * {@code headroom.store.latency}, {@code headroom.store.failures} by fallback.
 *
 * <p>Thread-safe.
 */
public final class HeadroomRateLimiter extends AbstractRateLimiter<HeadroomRateLimiter.Config> {

  /** The window of an inline policy that gives none. */
  public static final Duration DEFAULT_WINDOW = Duration.ofSeconds(60);

  /** The prefix of this rate limiter's arguments in a route's {@code RequestRateLimiter} filter. */
  public static final String CONFIGURATION_PROPERTY_NAME = "headroom-rate-limiter";

  private final QuotaLimiter limiter;
  private final PolicyCatalog catalog;
  private final Set<HeaderDialect> defaultDialects;
  private final boolean refuseOnStoreFailure;
  /** The meters, or null for none: Micrometer, which is optional, is then never loaded. */
  private final DecisionMeters meters;
  /** Times the store's answers when there are meters. */
  private final Ticker ticker;
  /**
   * The server's loops when the store answers on them, or null: an exchange whose decision
   * completes later then resumes on the loop it came from instead of on a Reactor thread.
   */
  private final ServerLoops serverLoops;
  /** Each route's arguments read once, with the arguments they were read from. */
  private final Map<String, RouteLimit> routes = new ConcurrentHashMap<>();

  HeadroomRateLimiter(QuotaLimiter limiter, PolicyCatalog catalog, Set<HeaderDialect> defaultDialects,
      boolean refuseOnStoreFailure, ConfigurationService configurationService, DecisionMeters meters, Ticker ticker,
      ServerLoops serverLoops) {
    super(Config.class, CONFIGURATION_PROPERTY_NAME, configurationService);
    this.limiter = Objects.requireNonNull(limiter, "limiter");
    this.catalog = Objects.requireNonNull(catalog, "catalog");
    this.defaultDialects = Set.copyOf(defaultDialects);
    this.refuseOnStoreFailure = refuseOnStoreFailure;
    this.meters = meters;
    this.ticker = Objects.requireNonNull(ticker, "ticker");
    this.serverLoops = serverLoops;
  }

  /**
   * A rate limiter deciding with the given limiter, with the given named policies.
   *
   * @param policies the policies routes may name with {@code policy}
   * @param configurationService Spring Cloud Gateway's, which binds the routes' arguments
   */
  public static HeadroomRateLimiter of(QuotaLimiter limiter, Collection<QuotaPolicy> policies,
      ConfigurationService configurationService) {
    Map<String, QuotaPolicy> named = new LinkedHashMap<>();
    policies.forEach(p -> named.put(p.name(), p));
    return new HeadroomRateLimiter(limiter, PolicyCatalog.of(named), EnumSet.of(HeaderDialect.IETF), false,
        configurationService, null, Ticker.system(), null);
  }

  /** Reads a route's arguments as they are bound, so that a bad one stops the routes from loading. */
  @Override
  public void onApplicationEvent(FilterArgsEvent event) {
    super.onApplicationEvent(event);
    Config bound = getConfig().get(event.getRouteId());
    if (bound != null) {
      routes.put(event.getRouteId(), RouteLimit.read(event.getRouteId(), bound, catalog, defaultDialects));
    }
  }

  @Override
  public Mono<Response> isAllowed(String routeId, String id) {
    RouteLimit route;
    try {
      route = route(routeId);
    } catch (RuntimeException e) {
      return Mono.error(e);
    }
    PartitionKey key = partition(id);
    // A decision that completes later does so on the store's thread (Lettuce's I/O loop, or the
    // deadline timer). With the store on the server's loops (ServerLoops) the exchange resumes on
    // the loop it came from, as a task queued there (no wake-up when the reply was read on that
    // loop; under load it is awake anyway). Otherwise it goes on on a Reactor thread, so that
    // the gateway's work never delays the store's next replies. One decided at once (the memory
    // store) goes on here, as the WebFlux filter does with its verdicts.
    return Mono.defer(() -> {
      EventExecutor home = serverLoops == null ? null : serverLoops.current();
      long asked = meters == null ? 0 : ticker.read();
      CompletableFuture<Decision> decided =
          limiter.acquireAsync(List.of(Acquisition.of(route.policy, key, route.cost))).toCompletableFuture();
      if (meters != null) {
        decided = decided.whenComplete((answer, failure) -> record(answer, failure, asked));
      }
      if (decided.isDone()) {
        return Mono.fromFuture(decided);
      }
      if (home != null) {
        return Mono.fromFuture(resumeOn(home, decided));
      }
      return Mono.fromFuture(decided).publishOn(Schedulers.parallel());
    })
        .map(route::response)
        .onErrorResume(StoreException.class, e -> Mono.just(storeFailed()));
  }

  /**
   * {@code decided}, completed by a task queued on {@code home} (or in the completing thread when
   * {@code home} no longer takes tasks, as while the server shuts down). Queued even when the
   * reply was read on {@code home}, as the gateway does: the exchange then goes on after the
   * Redis client's read handler has returned, not inside it, and a task queued by the running
   * loop wakes nothing. Never blocks.
   */
  private static <T> CompletableFuture<T> resumeOn(EventExecutor home, CompletableFuture<T> decided) {
    CompletableFuture<T> resumed = new CompletableFuture<>();
    decided.whenComplete((value, failure) -> {
      try {
        home.execute(() -> complete(resumed, value, failure));
      } catch (RejectedExecutionException e) {
        complete(resumed, value, failure);
      }
    });
    return resumed;
  }

  private static <T> void complete(CompletableFuture<T> resumed, T value, Throwable failure) {
    if (failure != null) {
      resumed.completeExceptionally(failure instanceof CompletionException && failure.getCause() != null
          ? failure.getCause() : failure);
    } else {
      resumed.complete(value);
    }
  }

  private RouteLimit route(String routeId) {
    Config config = getConfig().get(routeId);
    if (config == null) {
      throw new CloudGatewayConfigurationException("spring.cloud.gateway.server.webflux.routes[id=" + routeId
          + "].filters[RequestRateLimiter]." + CONFIGURATION_PROPERTY_NAME, null,
          "a policy (" + CONFIGURATION_PROPERTY_NAME + ".policy naming one of "
          + catalog.all().keySet() + ", or " + CONFIGURATION_PROPERTY_NAME + ".quota and .window)");
    }
    RouteLimit known = routes.get(routeId);
    if (known != null && known.source == config) {
      return known;
    }
    // set through the Java DSL (RequestRateLimiterSpec.rateLimiter), or rebound: read it now
    RouteLimit read = RouteLimit.read(routeId, config, catalog, defaultDialects);
    routes.put(routeId, read);
    return read;
  }

  /** Records a decision (or the store's failure) in the meters; a meter that fails never fails the request. */
  private void record(Decision decision, Throwable failure, long asked) {
    try {
      meters.storeLatency(ticker.read() - asked);
      Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
      if (decision != null) {
        meters.decided(decision);
      } else if (cause instanceof StoreException) {
        meters.storeFailed(refuseOnStoreFailure);
      }
    } catch (RuntimeException ignored) {
      // the meters are not the request's concern
    }
  }

  private Response storeFailed() {
    if (!refuseOnStoreFailure) {
      return new Response(true, Map.of());
    }
    return new Response(false, Map.of(HeaderNames.RETRY_AFTER, Long.toString(ServiceErrors.STORE_RETRY_AFTER_SECONDS)));
  }

  /** The key resolver's key as a partition: hashed, so a credential is never a store key. */
  static PartitionKey partition(String id) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(id.getBytes(StandardCharsets.UTF_8));
      return PartitionKey.of("key:" + HexFormat.of().formatHex(digest));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every Java platform", e);
    }
  }

  /** One route's arguments, read once: its policy, the cost of a request, how its fields are written. */
  private static final class RouteLimit {
    final Config source;
    final QuotaPolicy policy;
    final long cost;
    final RateLimitHeaders headers;

    private RouteLimit(Config source, QuotaPolicy policy, long cost, RateLimitHeaders headers) {
      this.source = source;
      this.policy = policy;
      this.cost = cost;
      this.headers = headers;
    }

    static RouteLimit read(String routeId, Config c, PolicyCatalog catalog, Set<HeaderDialect> defaultDialects) {
      String at = "spring.cloud.gateway.server.webflux.routes[id=" + routeId + "].filters[RequestRateLimiter]."
          + CONFIGURATION_PROPERTY_NAME;
      QuotaPolicy policy = policy(at, routeId, c, catalog);
      if (policy.unit() != QuotaUnit.REQUESTS) {
        throw new CloudGatewayConfigurationException(at + ".policy", policy.name(), "a policy counting requests: "
            + "RequestRateLimiter sees neither the response's end nor its bytes (use the Headroom filter for "
            + policy.unit().token() + ")");
      }
      long cost = c.getCost() == null ? 1 : PolicyCatalog.cost(at + ".cost", c.getCost());
      Set<HeaderDialect> dialects = c.getDialect() == null || c.getDialect().isEmpty() ? defaultDialects
          : PolicyCatalog.dialects(at + ".dialect", c.getDialect());
      RateLimitHeaders headers;
      try {
        headers = RateLimitHeaders.builder().dialects(dialects).exposure(PartitionKeyExposures.off())
            .policies(List.of(policy)).build();
      } catch (IllegalArgumentException e) {
        throw new CloudGatewayConfigurationException(at + ".dialect", c.getDialect(), e.getMessage(), e);
      }
      return new RouteLimit(c, policy, cost, headers);
    }

    private static QuotaPolicy policy(String at, String routeId, Config c, PolicyCatalog catalog) {
      boolean inline = c.getQuota() != null || c.getWindow() != null || c.getAlgorithm() != null;
      if (c.getPolicy() != null && !inline) {
        return catalog.find(c.getPolicy()).orElseThrow(() -> new CloudGatewayConfigurationException(at + ".policy",
            c.getPolicy(), "one of headroom.cloud-gateway.policies " + catalog.all().keySet()
                + ", or an inline policy given quota and window"));
      }
      if (c.getPolicy() != null && catalog.find(c.getPolicy()).isPresent()) {
        throw new CloudGatewayConfigurationException(at + ".quota", c.getQuota(), "no quota, window or algorithm "
            + "beside policy '" + c.getPolicy() + "', which headroom.cloud-gateway.policies declares");
      }
      if (c.getQuota() == null) {
        throw new CloudGatewayConfigurationException(at + ".quota", null, "a whole number of requests per window "
            + "(or " + CONFIGURATION_PROPERTY_NAME + ".policy naming one of " + catalog.all().keySet() + ")");
      }
      String name = c.getPolicy() != null ? c.getPolicy() : routeId;
      QuotaPolicy.Builder b = QuotaPolicy.builder(name);
      try {
        b.quota(c.getQuota());
      } catch (IllegalArgumentException e) {
        throw new CloudGatewayConfigurationException(at + ".quota", c.getQuota(), "a whole number from 0 to "
            + QuotaPolicy.MAX_QUOTA, e);
      }
      Duration window = c.getWindow() == null ? DEFAULT_WINDOW : PolicyCatalog.window(at + ".window", c.getWindow());
      try {
        b.window(window);
      } catch (IllegalArgumentException e) {
        throw new CloudGatewayConfigurationException(at + ".window", c.getWindow(), "a whole number of seconds "
            + "from 1 s to " + QuotaPolicy.MAX_WINDOW, e);
      }
      b.algorithm(PolicyCatalog.algorithm(at + ".algorithm", c.getAlgorithm() == null ? "fixed-window" : c.getAlgorithm()));
      try {
        return b.build();
      } catch (IllegalArgumentException e) {
        throw new CloudGatewayConfigurationException(at, name, "a consistent policy (" + e.getMessage() + ")", e);
      }
    }

    Response response(Decision d) {
      Map<String, String> fields = new LinkedHashMap<>();
      headers.write(d, d.allowed() ? 200 : 429, (name, value) -> fields.merge(name, value, (a, b) -> a + ", " + b));
      return new Response(d.allowed(), fields);
    }
  }

  /**
   * The arguments of one route ({@value #CONFIGURATION_PROPERTY_NAME}{@code .*}), bound by Spring
   * Cloud Gateway. Either {@code policy} naming a declared policy, or {@code quota} with optional
   * {@code window} (default 60 s) and {@code algorithm} (default fixed-window).
   */
  public static class Config {
    private String policy;
    private Long quota;
    private String window;
    private String algorithm;
    private List<String> dialect = new ArrayList<>();
    private Long cost;

    /** A policy of {@code headroom.cloud-gateway.policies}; or the name of the inline one. */
    public String getPolicy() {
      return policy;
    }

    public Config setPolicy(String policy) {
      this.policy = policy;
      return this;
    }

    /** Requests per window of an inline policy. */
    public Long getQuota() {
      return quota;
    }

    public Config setQuota(Long quota) {
      this.quota = quota;
      return this;
    }

    /** The window of an inline policy: {@code 60s}, {@code 1m}, {@code PT1H}. */
    public String getWindow() {
      return window;
    }

    public Config setWindow(String window) {
      this.window = window;
      return this;
    }

    /** fixed-window, sliding-window or token-bucket. */
    public String getAlgorithm() {
      return algorithm;
    }

    public Config setAlgorithm(String algorithm) {
      this.algorithm = algorithm;
      return this;
    }

    /** The dialects of the fields: ietf, ietf-next, draft-09, draft-07, draft-06, draft-03, x-ratelimit. */
    public List<String> getDialect() {
      return dialect;
    }

    public Config setDialect(List<String> dialect) {
      this.dialect = dialect;
      return this;
    }

    /** Units each request takes; 1 when not given. */
    public Long getCost() {
      return cost;
    }

    public Config setCost(Long cost) {
      this.cost = cost;
      return this;
    }

    @Override
    public String toString() {
      return "Config{policy=" + policy + ", quota=" + quota + ", window=" + window + ", algorithm=" + algorithm
          + ", dialect=" + dialect + ", cost=" + cost + "}";
    }
  }
}
