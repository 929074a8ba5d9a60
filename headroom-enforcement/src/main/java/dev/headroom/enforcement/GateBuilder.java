package dev.headroom.enforcement;

import dev.headroom.Partitioning;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.Ticker;
import dev.headroom.enforcement.discovery.LimitsDiscoveryDocument;
import dev.headroom.enforcement.partition.AllowList;
import dev.headroom.enforcement.partition.ClientAddressResolver;
import dev.headroom.enforcement.partition.PartitionKeyDerivation;
import dev.headroom.enforcement.partition.PartitionKeyExposures;
import dev.headroom.enforcement.plan.Plan;
import dev.headroom.enforcement.plan.PlanResolver;
import dev.headroom.enforcement.plan.Plans;
import dev.headroom.http.PartitionKeyExposure;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.headers.FieldRules;
import dev.headroom.http.headers.HeaderDialect;
import dev.headroom.http.headers.RateLimitHeaders;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.UnaryOperator;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.random.RandomGenerator;

/**
 * Configures a {@link Gate}; {@link #build()} validates everything at once. Front ends wrap it in
 * their own builders. Not thread-safe.
 *
 * @param <R> the front end's request type, which route conditions test
 */
public final class GateBuilder<R> {
  QuotaLimiter limiter;
  LimitRefusals refusals;
  private final List<RouteRules> routes = new ArrayList<>();
  private final List<Predicate<Object>> conditions = new ArrayList<>();
  private Set<HeaderDialect> dialects = EnumSet.of(HeaderDialect.IETF);
  private PartitionKeyExposure exposure = PartitionKeyExposures.off();
  private ClientAddressResolver clientAddresses = ClientAddressResolver.direct();
  GateListener listener = GateListener.none();
  Gate.StoreFailureMode storeFailureMode = Gate.StoreFailureMode.ALLOW;
  Ticker ticker = Ticker.system();
  private boolean omitOnRedirect;
  private FieldRules fields = FieldRules.none();
  final Map<String, Escalation> escalations = new HashMap<>();
  private final Map<String, Waiting> queues = new HashMap<>();
  private Waiting.Timer waitTimer;
  Waiters waiters;
  private String service;
  private String description;
  private Consumer<LimitsDiscoveryDocument.Builder> discoveryCustomizer = b -> {};
  final Set<String> discoveryPaths = new LinkedHashSet<>(Gate.DEFAULT_DISCOVERY_PATHS);
  PlanStep plans;
  private final Map<String, AllowList> allowLists = new HashMap<>();
  AllowLists allows;
  Escalations escalationState = new Escalations();
  CapacityReductions capacityState = new CapacityReductions();
  /** The gate whose adaptive routes carry over, or null. */
  private Gate<?> adaptiveFrom;
  /** Typed as Micrometer's, but only loaded when set: Micrometer is an optional dependency. */
  private io.micrometer.core.instrument.MeterRegistry meterRegistry;
  private io.micrometer.observation.ObservationRegistry observationRegistry;
  Telemetry telemetry;

  GateBuilder() {}

  /** Plans resolved per request within {@code deadline} ({@link PlanStep}); built with {@link Plans#of}. */
  public GateBuilder<R> plans(Plans plans, PlanResolver resolver, Duration deadline) {
    this.plans = new PlanStep(plans, resolver, deadline);
    return this;
  }

  /**
   * The escalation blocks and capacity reductions this gate reads and writes, instead of fresh
   * ones: for a front end that builds a new gate when its configuration is reloaded (the gateway),
   * so that a blocked partition stays blocked and a reduced policy stays reduced across the reload.
   */
  public GateBuilder<R> state(Escalations escalations, CapacityReductions capacity) {
    this.escalationState = Objects.requireNonNull(escalations, "escalations");
    this.capacityState = Objects.requireNonNull(capacity, "capacity");
    return this;
  }

  /**
   * The gate this one replaces, when a front end builds a new gate on a configuration reload (the
   * gateway): a route with adaptive concurrency whose identity (its key, else its methods and
   * template) and adaptive settings equal a route's of {@code previous} takes over what that route
   * learnt and holds (the limit, the highest limit, the requests in flight and of each share), so
   * that a reload changing something else does not send the limit back to its initial value. A
   * route whose settings changed starts afresh. None by default.
   */
  public GateBuilder<R> adaptiveFrom(Gate<?> previous) {
    this.adaptiveFrom = previous;
    return this;
  }

  /** Required: decides every request, through its store. */
  public GateBuilder<R> limiter(QuotaLimiter limiter) {
    this.limiter = limiter;
    return this;
  }

  /** Required: the refusal texts of every policy (and the clock of {@code windowResetAt}). */
  public GateBuilder<R> refusals(LimitRefusals refusals) {
    this.refusals = refusals;
    return this;
  }

  /**
   * Callers that bypass a policy (headroom-http {@link AllowList}, the gateway's {@code allow}):
   * neither counted nor refused by it; a CIDR block is matched against the client address as
   * {@link #clientAddresses} resolves it. A plan's version of the policy follows its list.
   */
  public GateBuilder<R> allow(String policy, AllowList allow) {
    allowLists.put(Objects.requireNonNull(policy, "policy"), Objects.requireNonNull(allow, "allow"));
    return this;
  }

  /** A route; routes match in the order added. */
  public GateBuilder<R> route(RouteRules route) {
    return route(route, null);
  }

  /**
   * A route that applies only to requests {@code condition} accepts, such as "the framework's
   * handler for this request is the annotated one"; a request it refuses is matched against the
   * next routes, as if this route did not exist. Called before the store is asked, on the
   * request's thread (an event loop for a reactive front end): it must be fast, thread-safe, must
   * not block and must not throw.
   */
  @SuppressWarnings("unchecked")
  public GateBuilder<R> route(RouteRules route, Predicate<? super R> condition) {
    routes.add(Objects.requireNonNull(route, "route"));
    conditions.add(condition == null ? null : r -> ((Predicate<Object>) condition).test(r));
    return this;
  }

  /** Routes, in matching order. */
  public GateBuilder<R> routes(Collection<RouteRules> routes) {
    routes.forEach(this::route);
    return this;
  }

  /** The header dialects of routes that choose none; {@code ietf} by default. */
  public GateBuilder<R> dialects(Collection<HeaderDialect> dialects) {
    if (dialects == null || dialects.isEmpty() || dialects.stream().anyMatch(Objects::isNull)) {
      throw new IllegalArgumentException("dialects: expected at least one of ietf, draft-07, draft-06, draft-03, "
          + "x-ratelimit, got " + dialects);
    }
    this.dialects = EnumSet.copyOf(dialects);
    return this;
  }

  /** What is sent as {@code pk} in the ietf dialect; nothing by default. */
  public GateBuilder<R> exposure(PartitionKeyExposure exposure) {
    this.exposure = Objects.requireNonNull(exposure, "exposure");
    return this;
  }

  /** How {@code client-ip} partitions find the client (trusted proxies); the direct peer by default. */
  public GateBuilder<R> clientAddresses(ClientAddressResolver resolver) {
    this.clientAddresses = Objects.requireNonNull(resolver, "clientAddresses");
    return this;
  }

  /** Observes decisions (metrics); none by default. */
  public GateBuilder<R> listener(GateListener listener) {
    this.listener = Objects.requireNonNull(listener, "listener");
    return this;
  }

  /**
   * Records the gate's meters in {@code registry} (Micrometer; {@link HeadroomMeters} names them):
   * decisions by policy, outcome and problem, the store's latency, store failures and the fallback
   * applied, shadow outcomes, leases held. Off by default, and then costs nothing. A meter that
   * fails never fails a decision. Requires {@code io.micrometer:micrometer-core} on the class path.
   */
  public GateBuilder<R> meterRegistry(io.micrometer.core.instrument.MeterRegistry registry) {
    this.meterRegistry = Objects.requireNonNull(registry, "meterRegistry");
    return this;
  }

  /**
   * Makes each decided request a Micrometer {@code Observation} named
   * {@value HeadroomMeters#OBSERVATION} in {@code registry}, so a span where the application has a
   * tracing bridge (OpenTelemetry, Brave): route, policy, outcome and problem as low-cardinality key
   * values, Retry-After and the store's latency as high-cardinality ones, an event on a refusal
   * ({@link HeadroomMeters}). Off by default, and then costs nothing. Requires
   * {@code io.micrometer:micrometer-observation} on the class path.
   */
  public GateBuilder<R> observationRegistry(io.micrometer.observation.ObservationRegistry registry) {
    this.observationRegistry = Objects.requireNonNull(registry, "observationRegistry");
    return this;
  }

  /** What to do when the store fails; {@link Gate.StoreFailureMode#ALLOW} by default. */
  public GateBuilder<R> storeFailureMode(Gate.StoreFailureMode mode) {
    this.storeFailureMode = Objects.requireNonNull(mode, "storeFailureMode");
    return this;
  }

  /** The clock of epoch-seconds {@code X-RateLimit-Reset}; the system clock by default. */
  public GateBuilder<R> ticker(Ticker ticker) {
    this.ticker = Objects.requireNonNull(ticker, "ticker");
    return this;
  }

  /**
   * Leaves the RateLimit fields off 3xx responses of the application (draft-09 section 6: a low
   * remaining quota on a redirect can stall a client that follows it); off by default. The fields
   * are written when the response is committed, so the status is the one the application set.
   */
  public GateBuilder<R> omitOnRedirect(boolean omit) {
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
  public GateBuilder<R> onlyNearExhaustion(double threshold) {
    this.fields = fields.onlyNearExhaustion(threshold);
    return this;
  }

  /**
   * Caps {@code r / t} at {@code factor} times each policy's nominal throughput {@code q / w},
   * for policies whose window is at least {@code minWindow} (draft-09 sections 6 and 8.5: a
   * token bucket just refilled otherwise invites a burst). Off by default; a route's own
   * {@link RouteRules.Builder#fields} wins.
   *
   * @throws IllegalArgumentException unless {@code factor >= 1} and {@code minWindow} is not negative
   */
  public GateBuilder<R> capRemainingToResetRatio(double factor, Duration minWindow) {
    this.fields = fields.capRemainingToResetRatio(factor, minWindow);
    return this;
  }

  /**
   * The field rules of every route that does not set its own, option by option
   * ({@link RouteRules.Builder#fields}); what {@link #jitter}, {@link #onlyNearExhaustion} and
   * {@link #capRemainingToResetRatio} set one by one.
   */
  public GateBuilder<R> fields(FieldRules fields) {
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
  public GateBuilder<R> escalation(String policy, Escalation escalation) {
    escalations.put(Objects.requireNonNull(policy, "policy"), Objects.requireNonNull(escalation, "escalation"));
    return this;
  }

  /**
   * Lets requests the policy refuses wait for their turn ({@link Waiting}; the gateway's
   * {@code policies.*.queue}) in {@link Gate#decideAsync}, instead of being refused at once. Off by
   * default. With {@link #plans}, every plan's version of the policy ({@code paced:pro}) waits in
   * this queue too, under its {@code maxWait} and within its {@code maxQueued}.
   */
  public GateBuilder<R> queue(String policy, Waiting waiting) {
    queues.put(Objects.requireNonNull(policy, "policy"), Objects.requireNonNull(waiting, "waiting"));
    return this;
  }

  /**
   * The timer that re-decides waiting requests ({@link #queue}); by default one shared daemon
   * thread whose tasks are due on the gate's {@link #ticker} (a task woken before the ticker reached
   * its due time waits again). A host with timers of its own on the same ticker (the gateway's)
   * passes them; a test passes one that runs tasks as it moves a manual ticker.
   */
  public GateBuilder<R> waitTimer(Waiting.Timer timer) {
    this.waitTimer = Objects.requireNonNull(timer, "waitTimer");
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
  public GateBuilder<R> jitter(Duration max) {
    return jitter(max, null);
  }

  /** As {@link #jitter(Duration)}, drawing from {@code random} (seed it for reproducible tests). */
  public GateBuilder<R> jitter(Duration max, RandomGenerator random) {
    this.fields = fields.jitter(max, random);
    return this;
  }

  /** Serves the discovery document for this service; off until called. */
  public GateBuilder<R> discovery(String service, String description) {
    this.service = service;
    this.description = description;
    return this;
  }

  /** Adds changelog, feed or extensions to the discovery document. */
  public GateBuilder<R> discoveryCustomizer(Consumer<LimitsDiscoveryDocument.Builder> customizer) {
    this.discoveryCustomizer = Objects.requireNonNull(customizer, "discoveryCustomizer");
    return this;
  }

  /** Where the discovery document is served; {@link Gate#DEFAULT_DISCOVERY_PATHS} by default. */
  public GateBuilder<R> discoveryPaths(Collection<String> paths) {
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
  public Gate<R> build() {
    if (limiter == null) {
      throw new IllegalArgumentException("limiter: required, the QuotaLimiter that decides requests; got nothing");
    }
    if (refusals == null) {
      throw new IllegalArgumentException("refusals: required, the LimitRefusals with the texts of every policy; got nothing");
    }
    Map<String, QuotaPolicy> byName = new LinkedHashMap<>();
    List<Gate.CompiledRoute> compiled = new ArrayList<>();
    for (int i = 0; i < routes.size(); i++) {
      RouteRules r = routes.get(i);
      List<PartitionKeyDerivation> derivations = new ArrayList<>();
      for (QuotaPolicy p : r.policies()) {
        QuotaPolicy other = byName.putIfAbsent(p.name(), p);
        if (other != null && !other.equals(p)) {
          throw new IllegalArgumentException("route " + r.template() + ": policy '" + p.name() + "' is defined twice "
              + "differently (" + other + " and " + p + "); expected one definition per name");
        }
        derivations.add(PartitionKeyDerivation.of(p.partitioning().orElse(Partitioning.GLOBAL), clientAddresses));
      }
      List<PartitionKeyDerivation> shadowDerivations = new ArrayList<>();
      for (QuotaPolicy p : r.shadowPolicies()) {
        shadowDerivations.add(PartitionKeyDerivation.of(p.partitioning().orElse(Partitioning.GLOBAL), clientAddresses));
      }
      RateLimitHeaders headers;
      try {
        headers = headers(r.fields().merge(fields), r.dialects()).exposure(r.exposure().orElse(exposure))
            .omitOnRedirect(r.omitOnRedirect().orElse(omitOnRedirect)).policies(r.policies()).build();
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("route " + r.template() + ": " + e.getMessage(), e);
      }
      AdaptiveRoute adaptive = r.adaptive().isEmpty() ? null : adaptive(r);
      compiled.add(new Gate.CompiledRoute(r, conditions.get(i), derivations, shadowDerivations, headers, adaptive));
    }
    Set<String> names = new HashSet<>(byName.keySet());
    routes.forEach(r -> r.shadowPolicies().forEach(p -> names.add(p.name())));
    allows = new AllowLists(allowLists, clientAddresses);
    allows.check(names);
    for (String name : queues.keySet()) {
      if (!byName.containsKey(name)) {
        throw new IllegalArgumentException("queue: policy '" + name + "' is not a policy of any route; expected one of "
            + new TreeSet<>(byName.keySet()));
      }
    }
    for (String name : escalations.keySet()) {
      if (!byName.containsKey(name)) {
        throw new IllegalArgumentException("escalation: policy '" + name + "' is not a policy of any route; expected one of "
            + new TreeSet<>(byName.keySet()));
      }
    }
    GateDiscovery doc = service == null && description == null ? null
        : new GateDiscovery(service, description, refusals, List.copyOf(routes),
            plans == null ? null : plans.plans(), List.copyOf(byName.values()), discoveryCustomizer);
    telemetry = telemetry(plans == null ? null : plans.plans());
    waiters = queues.isEmpty() ? null : new Waiters(queues, waitTimer == null ? Waiters.defaultTimer(ticker) : waitTimer,
        ticker, meterRegistry == null ? Waiters.Meters.NONE : new WaitMeters(meterRegistry),
        plans == null ? UnaryOperator.identity() : plans.plans()::baseName);
    return new Gate<>(this, compiled, doc, new RuntimeLimits(byName, plans == null ? null : plans.plans()));
  }

  /**
   * The adaptive concurrency of route {@code r}: the previous gate's, carried over, when a route of
   * the same identity there has the same settings; otherwise new. Its shares must name plans.
   */
  private AdaptiveRoute adaptive(RouteRules r) {
    AdaptiveConcurrency a = r.adaptive().get();
    try {
      a.checkPlans(plans == null ? List.of() : plans.plans().plans().stream().map(Plan::name).toList());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("route " + r.template() + ": " + e.getMessage(), e);
    }
    AdaptiveRoute before = adaptiveFrom == null ? null : adaptiveFrom.adaptive(Gate.identity(r));
    return before != null && before.config().equals(a) ? before.carriedOver(ticker, capacityState, r.policies())
        : new AdaptiveRoute(a, ticker, capacityState, r.policies());
  }

  /** The Micrometer recording of the registries given, or null for none (Micrometer is then never loaded). */
  private Telemetry telemetry(Plans plans) {
    if (meterRegistry == null && observationRegistry == null) {
      return null;
    }
    CapacityReductions capacity = capacityState;
    GateMeters meters = meterRegistry == null ? null
        : new GateMeters(meterRegistry, name -> capacity.isReduced(name, plans == null ? name : plans.baseName(name)));
    return new MicrometerTelemetry(meters, observationRegistry);
  }

  /**
   * The header writer of a route (or of a front end's own route kind, such as a vend route) with
   * these field rules and dialects, under the gate's exposure, ticker and omit-on-redirect rule;
   * without policies.
   */
  public RateLimitHeaders.Builder headers(FieldRules routeFields, Optional<Set<HeaderDialect>> routeDialects) {
    return routeFields.applyTo(RateLimitHeaders.builder()).dialects(routeDialects.orElse(dialects))
        .exposure(exposure).ticker(ticker).omitOnRedirect(omitOnRedirect);
  }

  /** Header writers for {@link Gate#headersFor}, from the settings as they are now (a snapshot). */
  Function<Optional<Set<HeaderDialect>>, RateLimitHeaders> headerFactory() {
    FieldRules f = fields;
    Set<HeaderDialect> d = EnumSet.copyOf(dialects);
    PartitionKeyExposure e = exposure;
    Ticker t = ticker;
    return routeDialects -> f.applyTo(RateLimitHeaders.builder()).dialects(routeDialects.orElse(d))
        .exposure(e).ticker(t).build();
  }

  /** The field rules set on the gate, which a route's own rules are merged over. */
  public FieldRules fields() {
    return fields;
  }
}
