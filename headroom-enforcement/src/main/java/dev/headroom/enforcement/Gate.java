package dev.headroom.enforcement;

import dev.headroom.Acquisition;
import dev.headroom.Decision;
import dev.headroom.PartitionKey;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.StoreException;
import dev.headroom.Ticker;
import dev.headroom.enforcement.discovery.EntityTag;
import dev.headroom.enforcement.discovery.LimitsDiscoveryDocument;
import dev.headroom.enforcement.partition.PartitionKeyDerivation;
import dev.headroom.enforcement.plan.Plan;
import dev.headroom.enforcement.plan.Plans;
import dev.headroom.http.DiscoveryPaths;
import dev.headroom.http.HeaderNames;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.ProblemType;
import dev.headroom.http.body.Refusal;
import dev.headroom.http.body.RefusalFormat;
import dev.headroom.http.body.ServiceErrors;
import dev.headroom.http.headers.HeaderDialect;
import dev.headroom.http.headers.RateLimitHeaders;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Headroom's enforcement of one request, whatever server it is embedded in: the one path the
 * servlet filter, the WebFlux filter and the Spring Cloud Gateway filter share, so that no
 * behaviour is written three times. The front end turns its request into a {@link GateRequest},
 * asks {@link #decide} (blocking, for a thread per request) or {@link #decideAsync} (never blocking,
 * for an event loop), and does what the {@link Verdict} says; it only writes.
 *
 * <h2>One request (ARCHITECTURE.md, "One request through any front end")</h2>
 * <ol>
 * <li>{@code GET}/{@code HEAD} of a discovery path is answered from the
 *   {@link LimitsDiscoveryDocument}, with a strong ETag, {@code Cache-Control} and 304 for a
 *   matching {@code If-None-Match} (Graceful Boundaries section 1, RFC 9110 section 13.1.2).
 * <li>The first route whose methods and path template match, and whose condition (if any) accepts
 *   the request, decides the policies; a request matching none passes untouched.
 * <li>With plans, the request's plan ({@link Plans}); an invalid credential is 401.
 * <li>The request's cost (the route's, or its cost header: a bad value is 400).
 * <li>Shadow policies decided on their own, never refusing.
 * <li>A partition blocked by an escalation is refused without asking the store (draft-09 section
 *   5.3); otherwise each policy's partition key is derived ({@link PartitionKeyDerivation}) and
 *   one store call decides every policy at once, under the limits in force ({@link RuntimeLimits},
 *   the plan's overrides, a reduced capacity).
 * <li>Refused: 429 (413 when the request can never fit; 503 {@code temporary-reduced-capacity}
 *   when capacity is reduced; {@code abnormal-usage-detected} when an escalation blocks), the
 *   RateLimit fields in the route's dialects, Retry-After, and one body that is RFC 9457 problem
 *   details and a Graceful Boundaries refusal, as HTML when the caller prefers it.
 * <li>Allowed: an {@link Admission}, which writes the fields for the status the application sets
 *   and, when the response completes, charges content bytes and releases leases.
 * <li>A store that cannot decide: the request passes ({@link StoreFailureMode#ALLOW}) or is refused
 *   503 with the Retry-After every front end sends ({@link StoreFailureMode#REFUSE}), shorter when
 *   the store says this process is overloaded ({@link StoreException#overloaded}).
 * </ol>
 *
 * <h2>Rules a route adds ({@link RouteRules})</h2>
 * A policy may decide only some methods ({@link RouteRules#appliesTo}), count only failures or only
 * successes ({@link RouteRules#counting(String)}), and a response may state units charged on top
 * ({@link RouteRules#chargeHeader()}); every front end, the standalone gateway included, gets them
 * from here.
 *
 * <h2>Behaviours decided once for every front end</h2>
 * <ul>
 * <li>Two escalating policies that start a block with one refusal: the refusal names the one that
 *   blocks longest, whose block is the Retry-After ({@link #escalate}).
 * <li>Plan fallbacks and shadow refusals are logged at most once per ten seconds with a count of
 *   the others ({@link PlanStep}, {@link #SHADOW_WARNING_INTERVAL}): a failing resolver or a tight
 *   shadow limit must not flood the log.
 * <li>A policy's method rule lets HEAD follow GET, as route matching does.
 * <li>A charge header's units go to the route's {@code requests} policies only, never to a
 *   concurrency lease or a content-bytes policy.
 * </ul>
 *
 * <p>Immutable and thread-safe; {@link #reduceCapacity} and {@link #limits()} change limits at run
 * time.
 *
 * @param <R> the front end's own request type, which route conditions test
 */
public final class Gate<R> {

  /** The conventional discovery paths (Graceful Boundaries section 1). */
  public static final List<String> DEFAULT_DISCOVERY_PATHS = DiscoveryPaths.ALL;

  /** What to do when the store cannot decide. */
  public enum StoreFailureMode {
    /** Let the request through without RateLimit fields: availability over enforcement. */
    ALLOW,
    /** Refuse with 503 {@code temporary-reduced-capacity}: enforcement over availability. */
    REFUSE
  }

  private final QuotaLimiter limiter;
  private final LimitRefusals refusals;
  private final List<CompiledRoute> routes;
  private final GateListener listener;
  private final StoreFailureMode storeFailureMode;
  private final GateDiscovery discoveryFactory;
  private volatile BuiltDiscovery discovery;
  private final RuntimeLimits limits;
  private final PlanStep plans;
  private final Set<String> discoveryPaths;
  private final String discoveryPath;
  private final Map<String, Escalation> escalationsByPolicy;
  private final Escalations escalations;
  private final CapacityReductions capacity;
  private final Map<RouteRules, CompiledRoute> byRules = new IdentityHashMap<>();
  private final ShadowStep shadows;
  /** The routes' adaptive concurrency, in route order: their limits are in the discovery document. */
  private final List<AdaptiveRoute> adaptiveRoutes;
  private final Map<RouteRules, AdaptiveRoute> adaptiveByRules;
  /** The requests waiting under policies with a queue; null when none has one. */
  private final Waiters waiters;

  /** The least time between two log lines about shadow policies that would refuse. */
  public static final Duration SHADOW_WARNING_INTERVAL = Duration.ofSeconds(10);
  private final Map<String, QuotaPolicy> policiesByName;
  private final Ticker ticker;
  private final AllowLists allows;
  private final Function<Optional<Set<HeaderDialect>>, RateLimitHeaders> headersFor;
  /** What is recorded of each decision in Micrometer; null (nothing recorded, nothing read) without a registry. */
  private final Telemetry telemetry;

  Gate(GateBuilder<R> b, List<CompiledRoute> routes, GateDiscovery discovery, RuntimeLimits limits) {
    this.headersFor = b.headerFactory();
    this.limiter = b.limiter;
    this.refusals = b.refusals;
    this.routes = List.copyOf(routes);
    this.telemetry = b.telemetry;
    this.listener = telemetry == null ? b.listener : new BothListeners(b.listener, telemetry.listener());
    this.storeFailureMode = b.storeFailureMode;
    this.discoveryFactory = discovery;
    this.limits = limits;
    this.plans = b.plans;
    this.capacity = b.capacityState;
    List<AdaptiveRoute> adaptive = new ArrayList<>();
    Map<RouteRules, AdaptiveRoute> adaptiveByRules = new IdentityHashMap<>();
    for (CompiledRoute r : this.routes) {
      if (r.adaptive != null) {
        adaptive.add(r.adaptive);
        adaptiveByRules.put(r.rules, r.adaptive);
      }
    }
    this.adaptiveRoutes = List.copyOf(adaptive);
    this.adaptiveByRules = adaptiveByRules;
    limits.onChange(this::rebuildDiscovery);
    rebuildDiscovery();
    this.discoveryPaths = Set.copyOf(b.discoveryPaths);
    this.discoveryPath = discovery == null ? null : b.discoveryPaths.iterator().next();
    this.escalationsByPolicy = Map.copyOf(b.escalations);
    Map<String, QuotaPolicy> byName = new HashMap<>();
    routes.forEach(r -> r.rules.policies().forEach(p -> byName.put(p.name(), p)));
    this.policiesByName = Map.copyOf(byName);
    this.ticker = b.ticker;
    this.allows = b.allows;
    this.escalations = b.escalationState;
    this.routes.forEach(r -> byRules.put(r.rules, r));
    this.routes.forEach(r -> r.failures = e -> updateFailed(r.rules, e));
    if (telemetry != null) {
      this.routes.forEach(r -> r.released = this::leasesReleased);
    }
    this.shadows = new ShadowStep(limiter, allows, listener, ticker);
    this.waiters = b.waiters;
  }

  /** Starts a configuration. */
  public static <R> GateBuilder<R> builder() {
    return new GateBuilder<>();
  }

  /** The routes, in matching order. */
  public List<RouteRules> routes() {
    return routes.stream().map(r -> r.rules).toList();
  }

  /** The limiter that decides. */
  public QuotaLimiter limiter() {
    return limiter;
  }

  /** The refusal texts (and the service's origin, named in bodies). */
  public LimitRefusals refusals() {
    return refusals;
  }

  /** What the gate does when the store cannot decide. */
  public StoreFailureMode storeFailureMode() {
    return storeFailureMode;
  }

  /**
   * A header writer with the gate's field rules, exposure and clock, in {@code dialects} (the
   * gate's when empty), without policies: for a front end's own kind of route, such as a vend
   * route, whose responses carry the fields of its own decisions.
   */
  public RateLimitHeaders headersFor(Optional<Set<HeaderDialect>> dialects) {
    return headersFor.apply(dialects);
  }

  /**
   * 503 temporary-reduced-capacity with the Retry-After every front end sends, for a front end's
   * own kind of route whose store could not decide under {@link StoreFailureMode#REFUSE}.
   */
  public GateResponse unavailable(GateRequest request) {
    return GateResponses.unavailable(request, refusals.origin().orElse(null), false);
  }

  /** The first discovery path, which error bodies name; empty when discovery is off. */
  public Optional<String> discoveryPath() {
    return Optional.ofNullable(discoveryPath);
  }

  /**
   * Lowers (or, with 1, restores) a policy's capacity at run time, as the gateway's admin
   * {@code POST /capacity} does: the policy is enforced with quota {@code max(1, floor(q * factor))}
   * on the same counters, and its refusals are 503 {@code temporary-reduced-capacity} (draft-09
   * section 5.2) until restored.
   *
   * @throws IllegalArgumentException when no route has a policy of this name, or the factor is not in (0, 1]
   */
  public void reduceCapacity(String policy, double factor) {
    QuotaPolicy p = policiesByName.get(policy);
    if (p == null) {
      throw new IllegalArgumentException("policy: '" + policy + "' is not a policy of any route; expected one of "
          + new TreeSet<>(policiesByName.keySet()));
    }
    capacity.set(p, factor);
  }

  /** The factor of every policy whose capacity is reduced now, by name. */
  public Map<String, Double> reducedCapacity() {
    return capacity.factors();
  }

  /**
   * The policies whose refused requests wait for their turn ({@link GateBuilder#queue}), by name;
   * empty when none has a queue. Only {@link #decideAsync} lets a request wait: a front end on a
   * thread per request with queues here decides asynchronously too, so as not to hold the thread.
   */
  public Map<String, Waiting> queues() {
    return waiters == null ? Map.of() : waiters.queues();
  }

  /**
   * The requests waiting now in each policy's queue ({@link #queues()}), by policy name (a plan's
   * version of a policy waits in its base's queue); empty when no policy has a queue.
   */
  public Map<String, Integer> waiting() {
    return waiters == null ? Map.of() : waiters.waiting();
  }

  /**
   * The adaptive concurrency of each route that has it ({@link AdaptiveConcurrency}), in route
   * order: the limit learnt, the requests in flight and each plan's share, now.
   */
  public List<AdaptiveState> adaptiveStates() {
    List<AdaptiveState> out = new ArrayList<>(adaptiveRoutes.size());
    for (CompiledRoute r : routes) {
      if (r.adaptive != null) {
        out.add(r.adaptive.state(identity(r.rules)));
      }
    }
    return out;
  }

  /** The limits in force, changeable at run time without a restart. */
  public RuntimeLimits limits() {
    return limits;
  }

  private void rebuildDiscovery() {
    if (discoveryFactory == null) {
      return;
    }
    long version = capacity.version();
    List<Integer> learnt = adaptiveLimits();
    discovery = new BuiltDiscovery(version, learnt,
        discoveryFactory.build(p -> capacity.effective(limits.effective(p)), capacity::isReduced,
            r -> adaptiveByRules.get(r).limit()));
  }

  /** The adaptive routes' limits now, in route order. */
  private List<Integer> adaptiveLimits() {
    if (adaptiveRoutes.isEmpty()) {
      return List.of();
    }
    List<Integer> out = new ArrayList<>(adaptiveRoutes.size());
    adaptiveRoutes.forEach(a -> out.add(a.limit()));
    return out;
  }

  /** The document, and the capacity reductions' version and the adaptive limits it was built under. */
  private record BuiltDiscovery(long capacityVersion, List<Integer> adaptiveLimits, LimitsDiscoveryDocument document) {}

  /**
   * The discovery document served, when discovery is on: the limits in force, after run-time
   * changes ({@link #limits()}) and capacity reductions ({@link #reduceCapacity}, or the shared
   * {@link CapacityReductions} set directly), and the limits adaptive routes have learnt, rebuilt
   * when any of them changes (an adaptive limit moves at most once per window of its route: the
   * document, and its ETag, change with it).
   */
  public Optional<LimitsDiscoveryDocument> discovery() {
    BuiltDiscovery d = discovery;
    if (d == null) {
      return Optional.empty();
    }
    if (d.capacityVersion() != capacity.version() || !d.adaptiveLimits().equals(adaptiveLimits())) {
      rebuildDiscovery();
      d = discovery;
    }
    return Optional.of(d.document());
  }

  /**
   * Decides a request on the caller's thread, blocking while the plan resolver and the store
   * answer. It never waits in a policy's queue ({@link #queues()}): a refusal is the verdict.
   *
   * @param request the request as the gate sees it
   * @param nativeRequest the front end's own request, which route conditions test
   */
  public Verdict decide(GateRequest request, R nativeRequest) {
    GateResponse d = discoveryOrNull(request);
    if (d != null) {
      return Verdict.answer(d);
    }
    CompiledRoute route = match(request, nativeRequest);
    if (route == null) {
      return Verdict.PASS;
    }
    Telemetry.Record record = begin(route, request);
    if (record == null) {
      return decide(request, route, null);
    }
    Verdict v;
    try {
      v = decide(request, route, record);
    } catch (RuntimeException | Error e) {
      end(record, null, e);
      throw e;
    }
    end(record, v, null);
    return v;
  }

  /** The record of a decision about to be made, or null when nothing records (or recording failed: ignored). */
  private Telemetry.Record begin(CompiledRoute route, GateRequest request) {
    if (telemetry == null) {
      return null;
    }
    try {
      return telemetry.begin(route.rules, request);
    } catch (RuntimeException e) {
      return null; // Recording cannot fail the request.
    }
  }

  /** Tells the record of a decision how it ended; what it throws is ignored (a meter never fails a decision). */
  private static void end(Telemetry.Record record, Verdict verdict, Throwable failure) {
    try {
      record.end(verdict, failure);
    } catch (RuntimeException ignored) {
      // Recording cannot fail the request.
    }
  }

  private Verdict decide(GateRequest request, CompiledRoute route, Telemetry.Record record) {
    RoutedView view = new RoutedView(request, route.rules.template());
    Plan plan = null;
    if (plans != null) {
      Plans.Selection s = plans.select(request, view, ticker);
      if (s.rejected().isPresent()) {
        return rejected(request, route, s);
      }
      plan = s.plan();
    }
    Object next = prepare(request, route, view, plan, false);
    if (next instanceof Ask) {
      next = placed((Ask) next);
    }
    if (next instanceof Verdict) {
      return (Verdict) next;
    }
    Ask ask = (Ask) next;
    try {
      if (ask.acquisitions.isEmpty()) {
        return shadowsOnly(ask, ask.shadowFields.toCompletableFuture().join());
      }
      Decision decision;
      long asked = record == null ? 0 : ticker.read();
      try {
        decision = limiter.acquire(ask.acquisitions);
      } catch (StoreException e) {
        storeAnswered(record, asked);
        return undecided(ask, e);
      }
      storeAnswered(record, asked);
      return decided(ask, decision, ask.shadowFields.toCompletableFuture().join());
    } catch (RuntimeException | Error e) {
      abandon(ask); // a bug, or a limiter that throws what it should not: the place is not lost
      throw e;
    }
  }

  /**
   * Decides a request without blocking the caller's thread: the plan resolver's and the store's
   * asynchronous answers. The stage completes on whatever thread answered last (possibly a
   * store's I/O thread): a front end on an event loop hands its continuation back to its own
   * threads. It never fails for a store failure (that is a verdict); it fails only on a bug.
   */
  public CompletionStage<Verdict> decideAsync(GateRequest request, R nativeRequest) {
    GateResponse d = discoveryOrNull(request);
    if (d != null) {
      return CompletableFuture.completedFuture(Verdict.answer(d));
    }
    CompiledRoute route = match(request, nativeRequest);
    if (route == null) {
      return CompletableFuture.completedFuture(Verdict.PASS);
    }
    return decideAsync(request, route);
  }

  /**
   * As {@link #decideAsync(GateRequest, Object)} for a request whose route the front end matched
   * itself (the gateway's route table, which answers 404 and 405 on its own): neither discovery nor
   * route conditions are looked at. A decision the store makes at once (the in-memory store, a
   * refusal remembered) comes back as a completed stage, built on the caller's thread without
   * handing anything to another: the front end can test {@code isDone()} and carry on.
   *
   * @param route one of {@link #routes()}
   * @throws IllegalArgumentException when {@code route} is not one of this gate's routes
   */
  public CompletionStage<Verdict> decideAsync(RouteRules route, GateRequest request) {
    CompiledRoute r = byRules.get(route);
    if (r == null) {
      throw new IllegalArgumentException("route: " + route + " is not a route of this gate; expected one of " + routes());
    }
    return decideAsync(request, r);
  }

  private CompletionStage<Verdict> decideAsync(GateRequest request, CompiledRoute route) {
    Telemetry.Record record = begin(route, request);
    if (record == null) {
      return handedOver(decideAsync(request, route, null));
    }
    CompletableFuture<Verdict> f;
    try {
      f = decideAsync(request, route, record).toCompletableFuture();
    } catch (RuntimeException | Error e) {
      end(record, null, e);
      throw e;
    }
    if (f.isDone() && !f.isCompletedExceptionally()) {
      end(record, f.join(), null); // the fast path: nothing allocated for the record
    } else {
      f.whenComplete((v, e) -> end(record, v, e));
    }
    return handedOver(f);
  }

  /**
   * The stage handed to the caller. A caller may cancel it before the verdict comes (a client that
   * left while its request waited in a queue or for the store): an admission made after that has
   * nobody to complete it, so it is given up at once ({@link Admission#abandon}: its place in the
   * adaptive limit and its leases given back), instead of holding them for good.
   */
  private static CompletionStage<Verdict> handedOver(CompletionStage<Verdict> stage) {
    CompletableFuture<Verdict> f = stage.toCompletableFuture();
    if (f.isDone()) {
      return f;
    }
    CompletableFuture<Verdict> out = new CompletableFuture<>();
    f.whenComplete((v, e) -> {
      if (e != null) {
        out.completeExceptionally(e);
      } else if (!out.complete(v) && v.kind() == Verdict.Kind.ADMIT) {
        v.admission().abandon();
      }
    });
    return out;
  }

  /** A store's answer (or failure) {@code asked} nanoseconds ago on the ticker, for the record if any. */
  private void storeAnswered(Telemetry.Record record, long asked) {
    if (record != null) {
      try {
        record.storeAnswered(ticker.read() - asked);
      } catch (RuntimeException ignored) {
        // Recording cannot fail the request.
      }
    }
  }

  private CompletionStage<Verdict> decideAsync(GateRequest request, CompiledRoute route, Telemetry.Record record) {
    RoutedView view = new RoutedView(request, route.rules.template());
    if (plans == null) {
      return decideAsync(request, route, view, null, record);
    }
    CompletableFuture<Plans.Selection> selection = plans.selectAsync(request, view, ticker).toCompletableFuture();
    if (selection.isDone()) {
      Plans.Selection s = selection.join(); // never fails: the plan step answers every failure with a fallback
      return s.rejected().isPresent() ? CompletableFuture.completedFuture(rejected(request, route, s))
          : decideAsync(request, route, view, s.plan(), record);
    }
    return selection.thenCompose(s -> s.rejected().isPresent()
        ? CompletableFuture.completedFuture(rejected(request, route, s))
        : decideAsync(request, route, view, s.plan(), record));
  }

  /** 401 for an invalid credential (the plan step's answer), told to the listener. */
  private Verdict rejected(GateRequest request, CompiledRoute route, Plans.Selection s) {
    try {
      listener.planRejected(route.rules);
    } catch (RuntimeException ignored) {
      // A listener cannot fail the request (GateListener contract).
    }
    return Verdict.answer(plans.refusal(request, s.rejected().get(), refusals.origin().orElse(null)));
  }

  private CompletionStage<Verdict> decideAsync(GateRequest request, CompiledRoute route, RoutedView view, Plan plan,
      Telemetry.Record record) {
    Object next = prepare(request, route, view, plan, true);
    if (next instanceof Verdict) {
      return CompletableFuture.completedFuture((Verdict) next);
    }
    Ask unplaced = (Ask) next;
    CompletableFuture<List<PolicyOutcome>> shadowFields = unplaced.shadowFields.toCompletableFuture();
    if (!unplaced.acquisitions.isEmpty() && waiters != null) {
      // its partition has a line: it joins the end without taking a unit, nor a place in the
      // route's adaptive limit, first (a waiting request takes its place when its turn comes)
      CompletionStage<Verdict> behind = waiters.behind(unplaced.acquisitions, waiting(unplaced, shadowFields));
      if (behind != null) {
        return behind;
      }
    }
    next = placed(unplaced);
    if (next instanceof Verdict) {
      return CompletableFuture.completedFuture((Verdict) next);
    }
    Ask ask = (Ask) next;
    if (ask.permit == null) {
      return asked(ask, shadowFields, record);
    }
    // Every way out that is not a verdict (a limiter or a shadow step that throws, a stage that fails
    // or is cancelled with something other than a store failure) gives the place back: an adaptive
    // place, unlike a lease, never expires. A verdict owns it: a refusal gave it back, an
    // admission gives it back at completion.
    CompletableFuture<Verdict> v;
    try {
      v = asked(ask, shadowFields, record).toCompletableFuture();
    } catch (RuntimeException | Error e) {
      abandon(ask);
      throw e;
    }
    if (v.isDone() && !v.isCompletedExceptionally()) {
      return v;
    }
    return v.whenComplete((verdict, e) -> {
      if (e != null) {
        abandon(ask);
      }
    });
  }

  /** The request, with its place if it needs one, asks the store (unless no policy applies); the verdict. */
  private CompletionStage<Verdict> asked(Ask ask, CompletableFuture<List<PolicyOutcome>> shadowFields,
      Telemetry.Record record) {
    if (ask.acquisitions.isEmpty()) {
      // every enforced policy bypassed or out of its methods: only shadow fields, if any, are sent
      return shadowFields.isDone() ? CompletableFuture.completedFuture(shadowsOnly(ask, shadowFields.join()))
          : shadowFields.thenApply(fields -> shadowsOnly(ask, fields));
    }
    CompletableFuture<Decision> decision;
    long asked = record == null ? 0 : ticker.read();
    try {
      decision = limiter.acquireAsync(ask.acquisitions).toCompletableFuture();
    } catch (StoreException e) {
      storeAnswered(record, asked);
      return CompletableFuture.completedFuture(undecided(ask, e));
    }
    if (record != null) {
      // timed before the verdict is made of it: a dependent of the stage this returns
      decision = decision.whenComplete((d, e) -> storeAnswered(record, asked));
    }
    if (decision.isDone() && shadowFields.isDone()) {
      // the fast path: the store answered at once (in memory, or a refusal it remembers)
      Decision d;
      try {
        d = decision.join();
      } catch (CompletionException e) {
        return CompletableFuture.completedFuture(failed(ask, e));
      }
      return decidedOrWaits(ask, d, shadowFields);
    }
    return decision.thenCombine(shadowFields, (dec, fields) -> decidedOrWaits(ask, dec, shadowFields))
        .exceptionally(e -> CompletableFuture.completedFuture(failed(ask, e))).thenCompose(v -> v);
  }

  /**
   * The verdict of the store's decision; for a refusal a policy's queue takes, the verdict after
   * waiting. A refused request gives its place in the route's adaptive limit back before it waits:
   * waiting requests must not fill the limit that requests admitted now need.
   */
  private CompletionStage<Verdict> decidedOrWaits(Ask ask, Decision d, CompletableFuture<List<PolicyOutcome>> fields) {
    if (!d.allowed() && waiters != null) {
      abandon(ask);
      CompletionStage<Verdict> waited = waiters.afterRefusal(d, waiting(ask, fields));
      if (waited != null) {
        return waited;
      }
    }
    return CompletableFuture.completedFuture(decided(ask, d, fields.join()));
  }

  /**
   * A request about to wait, as {@link Waiters} re-decides it. It waits without a place in its
   * route's adaptive limit: each attempt takes one before the store is asked and gives it back
   * when the store refuses (or fails), so only the attempt that is admitted keeps it, as a request
   * that never waited does. When its turn comes with the limit full, it is refused 503
   * {@code temporary-reduced-capacity}, as a request arriving then would be: waiting is for the
   * policy's quota, and earns no place the upstream has not got.
   */
  private Waiters.Attempt waiting(Ask waiting, CompletableFuture<List<PolicyOutcome>> fields) {
    Ask ask = waiting.placed(null);
    AdaptiveRoute adaptive = ask.route.adaptive;
    return new Waiters.Attempt() {
      /** The place the latest attempt took; null when it took none. Attempts of one waiter do not overlap. */
      private volatile AdaptiveRoute.Permit permit;
      /** The latest attempt's refusal by the adaptive limit, which the store was not asked about; null when none. */
      private volatile Decision full;

      @Override
      public CompletionStage<Decision> acquire() {
        permit = null;
        full = null;
        if (adaptive == null) {
          return limiter.acquireAsync(ask.acquisitions);
        }
        AdaptiveRoute.Permit p = adaptive.tryAcquire(ask.plan);
        if (p == null) {
          Decision refused = adaptive.refused();
          full = refused;
          return CompletableFuture.completedFuture(refused);
        }
        permit = p;
        CompletionStage<Decision> s;
        try {
          s = limiter.acquireAsync(ask.acquisitions);
        } catch (RuntimeException | Error e) {
          p.abandon();
          throw e;
        }
        return s.whenComplete((d, e) -> {
          if (e != null || !d.allowed()) {
            p.abandon(); // refused again: it waits on (or is refused) without the place
          }
        });
      }

      @Override
      public CompletionStage<Verdict> decided(Decision decision) {
        if (decision == full) {
          return CompletableFuture.completedFuture(
              Verdict.answer(refuseKept(ask, decision, ProblemType.TEMPORARY_REDUCED_CAPACITY)));
        }
        Ask placed = decision.allowed() ? ask.placed(permit) : ask;
        CompletionStage<Verdict> v = fields.thenApply(f -> Gate.this.decided(placed, decision, f));
        return placed.permit == null ? v : v.whenComplete((x, e) -> {
          if (e != null) {
            abandon(placed);
          }
        });
      }

      @Override
      public Verdict failed(Throwable e) {
        return Gate.this.failed(ask, e);
      }
    };
  }

  /** A store's failed stage: a verdict for a store failure, else the bug rethrown. */
  private Verdict failed(Ask ask, Throwable e) {
    Throwable why = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    if (why instanceof StoreException) {
      return undecided(ask, (StoreException) why);
    }
    throw why instanceof CompletionException ? (CompletionException) why : new CompletionException(why);
  }

  /** No enforced policy decides the request: it passes, with the fields of its shadow policies when the route sends them. */
  private Verdict shadowsOnly(Ask ask, List<PolicyOutcome> shadowFields) {
    List<PolicyOutcome> fields = ask.permit == null ? shadowFields : AdaptiveRoute.with(shadowFields, ask.permit);
    if (fields.isEmpty()) {
      return Verdict.PASS;
    }
    return Verdict.admit(new Admission(limiter, ask.route, Decision.of(fields), List.of(), List.of(), List.of(),
        ask.request.method().equals("HEAD"), ask.route.failures, ask.permit));
  }

  /**
   * The Graceful Boundaries body of an error the application or the framework answered (404, 405,
   * 500, ...; Graceful Boundaries section 6; {@link ServiceErrors#forStatus}),
   * for a front end whose error bodies are on; a 405 without allowed methods is answered 400, since
   * a 405 must name them.
   *
   * @param allowedMethods for 405, the methods the resource accepts
   */
  public GateResponse serviceError(GateRequest request, int status, List<String> allowedMethods) {
    int sent = status == 405 && allowedMethods.isEmpty() ? 400 : status;
    Refusal body = ServiceErrors.forStatus(sent, request.method(), request.path(),
        allowedMethods, discoveryPath);
    if (refusals.origin().isPresent()) {
      body = body.toBuilder().origin(refusals.origin().get()).build();
    }
    RefusalFormat format = RefusalFormat.negotiate(request.header("Accept"));
    return GateResponses.refusal(sent, List.of(), format, format.body(body, null));
  }

  /**
   * A request about to be decided by the store.
   *
   * @param plan the request's plan's name; null without plans
   * @param permit its place in the route's adaptive limit; null when the route has none, or before it is taken
   */
  private record Ask(GateRequest request, CompiledRoute route, List<Acquisition> acquisitions,
      List<PartitionKey> keys, CompletionStage<List<PolicyOutcome>> shadowFields,
      List<Admission.Conditional> conditional, List<Acquisition> chargeable, String plan, AdaptiveRoute.Permit permit) {

    /** This request holding {@code p} as its place in the adaptive limit (null: none). */
    Ask placed(AdaptiveRoute.Permit p) {
      return new Ask(request, route, acquisitions, keys, shadowFields, conditional, chargeable, plan, p);
    }
  }

  /**
   * The request with its place in the route's adaptive limit, when the route has one; beyond the
   * learnt limit (and, with shares, the plan's share), 503 {@code temporary-reduced-capacity}, the
   * store not asked.
   */
  private Object placed(Ask ask) {
    if (ask.route.adaptive == null) {
      return ask;
    }
    AdaptiveRoute.Permit permit = ask.route.adaptive.tryAcquire(ask.plan);
    return permit != null ? ask.placed(permit)
        : Verdict.answer(refuseKept(ask, ask.route.adaptive.refused(), ProblemType.TEMPORARY_REDUCED_CAPACITY));
  }

  /**
   * Cost, shadows, escalation blocks and the acquisitions: a {@link Verdict} (an answer) or an
   * {@link Ask}, which has no place in the route's adaptive limit yet ({@link #placed}).
   */
  private Object prepare(GateRequest request, CompiledRoute route, RoutedView view, Plan plan, boolean async) {
    OptionalLong cost = CostHeader.cost(request, route.rules);
    if (cost.isEmpty()) {
      return Verdict.answer(CostHeader.refusal(request, route.rules, refusals.origin().orElse(null)));
    }
    CompletionStage<List<PolicyOutcome>> shadowFields = shadows.decide(route, view, cost.getAsLong(), async);
    List<QuotaPolicy> policies = route.rules.policies();
    List<Acquisition> acquisitions = new ArrayList<>(policies.size());
    // the keys are kept only for escalation, which counts a refusal against the refused partition
    List<PartitionKey> keys = escalationsByPolicy.isEmpty() ? List.of() : new ArrayList<>(policies.size());
    List<Admission.Conditional> conditional = List.of();
    List<Acquisition> chargeable = List.of();
    long now = Long.MIN_VALUE; // read once, and only for a policy that escalates
    String method = request.method();
    for (int i = 0; i < policies.size(); i++) {
      String name = policies.get(i).name();
      if (!route.rules.appliesTo(name, method)) {
        continue; // the policy decides other methods only
      }
      if (allows.bypasses(name, view)) {
        bypassed(route.rules, name);
        continue; // the caller is on the policy's allow list
      }
      QuotaPolicy base = limits.effective(policies.get(i));
      QuotaPolicy p = capacity.effective(plan == null ? base : plans.plans().policy(plan, base), name);
      PartitionKey key = route.derivations.get(i).derive(view);
      if (escalationsByPolicy.containsKey(name)) {
        if (now == Long.MIN_VALUE) {
          now = ticker.read();
        }
        long blocked = escalations.blockedFor(p.name(), key, now);
        if (blocked > 0) {
          blocked(route.rules, p, key);
          return Verdict.answer(refuseBlocked(request, p, Escalations.seconds(blocked)));
        }
      }
      if (!escalationsByPolicy.isEmpty()) {
        keys.add(key);
      }
      // content-bytes are charged after the fact; the request itself asks for nothing but is
      // refused while the partition is in debt.
      Acquisition a = Acquisition.of(p, key, units(p, cost.getAsLong()));
      acquisitions.add(a);
      if (a.cost() > 0 && p.unit() == QuotaUnit.REQUESTS) {
        RouteRules.Counting counting = route.rules.counting(name);
        if (counting != RouteRules.Counting.ALL) {
          conditional = conditional.isEmpty() ? new ArrayList<>(1) : conditional;
          conditional.add(new Admission.Conditional(a, counting));
        }
        if (route.rules.chargeHeader().isPresent()) {
          chargeable = chargeable.isEmpty() ? new ArrayList<>(1) : chargeable;
          chargeable.add(a);
        }
      }
    }
    return new Ask(request, route, acquisitions, keys, shadowFields, conditional, chargeable,
        plan == null ? null : plan.name(), null);
  }

  private Verdict undecided(Ask ask, StoreException e) {
    abandon(ask);
    notifyFailure(ask.route.rules, e);
    if (telemetry != null) {
      try {
        telemetry.storeFailed(storeFailureMode == StoreFailureMode.ALLOW ? "allow" : "refuse");
      } catch (RuntimeException ignored) {
        // Recording cannot fail the request.
      }
    }
    return storeFailureMode == StoreFailureMode.ALLOW ? Verdict.UNDECIDED
        : Verdict.answer(GateResponses.unavailable(ask.request, refusals.origin().orElse(null), e.overloaded()));
  }

  private void bypassed(RouteRules route, String policy) {
    try {
      listener.bypassed(route, policy);
    } catch (RuntimeException ignored) {
      // A listener cannot fail the request (GateListener contract).
    }
  }

  private void blocked(RouteRules route, QuotaPolicy policy, PartitionKey key) {
    try {
      listener.blocked(route, policy, key);
    } catch (RuntimeException ignored) {
      // A listener cannot fail the request (GateListener contract).
    }
  }

  private Verdict decided(Ask ask, Decision decision, List<PolicyOutcome> shadowFields) {
    try {
      listener.decided(ask.route.rules, decision);
    } catch (RuntimeException ignored) {
      // A listener cannot fail the request (GateListener contract).
    }
    if (!decision.allowed()) {
      abandon(ask);
      return Verdict.answer(refuse(ask, decision));
    }
    if (telemetry != null && !decision.leases().isEmpty()) {
      try {
        telemetry.leasesTaken(decision);
      } catch (RuntimeException ignored) {
        // Recording cannot fail the request.
      }
    }
    List<PolicyOutcome> fields = ask.permit == null ? shadowFields : AdaptiveRoute.with(shadowFields, ask.permit);
    return Verdict.admit(new Admission(limiter, ask.route, decision, fields, ask.conditional, ask.chargeable,
        ask.request.method().equals("HEAD"), ask.route.failures, ask.permit));
  }

  /** The request goes no further: its place in the route's adaptive limit, if it took one, is given back. */
  private static void abandon(Ask ask) {
    if (ask.permit != null) {
      ask.permit.abandon();
    }
  }

  /** A store update after the response failed (a charge, a refund, a lease's release). */
  private void updateFailed(RouteRules route, StoreException e) {
    notifyFailure(route, e);
    if (telemetry != null) {
      try {
        telemetry.storeFailed("ignore");
      } catch (RuntimeException ignored) {
        // Recording cannot fail the request.
      }
    }
  }

  /** The leases of an admitted request's decision were given back (or given up on). */
  private void leasesReleased(Decision decision) {
    try {
      telemetry.leasesReleased(decision);
    } catch (RuntimeException ignored) {
      // Recording cannot fail the request.
    }
  }

  private void notifyFailure(RouteRules route, StoreException e) {
    try {
      listener.storeFailed(route, e);
    } catch (RuntimeException ignored) {
      // A listener cannot fail the request (GateListener contract).
    }
  }

  private CompiledRoute match(GateRequest request, R nativeRequest) {
    String method = request.method();
    String path = request.path();
    for (CompiledRoute r : routes) {
      if (r.rules.matches(method, path) && r.accepts(nativeRequest)) {
        return r;
      }
    }
    return null;
  }

  /**
   * The answer to a request for the discovery document ({@code GET} or {@code HEAD} of a discovery
   * path): the document with its ETag and Cache-Control, or 304 for a matching
   * {@code If-None-Match}; empty when the request is for something else or discovery is off. For a
   * front end that matches its routes itself ({@link #decideAsync(RouteRules, GateRequest)}); the
   * other entry points answer discovery on their own.
   */
  public Optional<GateResponse> discoveryAnswer(GateRequest request) {
    return Optional.ofNullable(discoveryOrNull(request));
  }

  /** The discovery document's answer, or null when the request is not for it. */
  private GateResponse discoveryOrNull(GateRequest request) {
    String method = request.method();
    if (discovery == null || !(method.equals("GET") || method.equals("HEAD")) || !discoveryPaths.contains(request.path())) {
      return null;
    }
    LimitsDiscoveryDocument doc = discovery().orElseThrow();
    List<Map.Entry<String, String>> fields = List.of(Map.entry("ETag", doc.etag()),
        Map.entry("Cache-Control", LimitsDiscoveryDocument.cacheControl()));
    if (EntityTag.matchesIfNoneMatch(request.header("If-None-Match"), doc.etag())) {
      return new GateResponse(304, fields, null, new byte[0], false);
    }
    return new GateResponse(200, fields, "application/json", doc.toJsonBytes(), false);
  }

  /** The units a policy is asked for: bytes are charged after the fact, a concurrency lease is one. */
  static long units(QuotaPolicy p, long cost) {
    return switch (p.unit()) {
      case CONTENT_BYTES -> 0;
      case CONCURRENT_REQUESTS -> 1;
      default -> cost;
    };
  }

  /** A partition blocked by an escalation: refused without asking the store (draft-09 section 5.3). */
  private GateResponse refuseBlocked(GateRequest request, QuotaPolicy policy, long seconds) {
    Refusal refusal = refusals.abnormal(policy, seconds, List.of(policy.name()));
    RefusalFormat format = RefusalFormat.negotiate(request.header("Accept"));
    return GateResponses.refusal(refusal.status(), List.of(Map.entry(HeaderNames.RETRY_AFTER, Long.toString(seconds))),
        format, format.body(refusal, format == RefusalFormat.HTML ? request.target() : null),
        GateResponses.problem(refusal), policy.name());
  }

  private GateResponse refuse(Ask ask, Decision decision) {
    EscalationView worst = escalate(decision, ask.keys);
    Refusal refusal;
    if (worst.blockSeconds > 0) {
      refusal = refusals.abnormal(worst.policy, Math.max(worst.blockSeconds, decision.retryAfterSeconds()),
          refusals.refusal(decision).violatedPolicies());
    } else {
      String worstName = decision.mostConstraining().policy().name();
      ProblemType type = capacity.isReduced(worstName, plans == null ? worstName : plans.plans().baseName(worstName))
          ? ProblemType.TEMPORARY_REDUCED_CAPACITY : ProblemType.QUOTA_EXCEEDED;
      if (!exceedsQuota(decision)) {
        return refuseKept(ask, decision, type);
      }
      refusal = refusals.refusal(decision, type);
    }
    int status = refusal.status();
    List<Map.Entry<String, String>> fields = new ArrayList<>();
    boolean retryAfter = refusal.retryAfterSeconds().isPresent();
    Optional<Duration> written = ask.route.headers.write(decision, status, (name, value) -> {
      if (retryAfter || !name.equals(HeaderNames.RETRY_AFTER)) {
        fields.add(Map.entry(name, value)); // 413: waiting cannot help, so no Retry-After is promised
      }
    });
    if (written.isPresent() && retryAfter) {
      long wait = Math.max(written.get().getSeconds(), refusal.retryAfterSeconds().getAsLong());
      if (wait != written.get().getSeconds()) {
        GateResponses.set(fields, HeaderNames.RETRY_AFTER, Long.toString(wait)); // an escalation's block outlasts t
      }
      refusal = refusals.agreeing(refusal, wait);
    }
    RefusalFormat format = RefusalFormat.negotiate(ask.request.header("Accept"));
    return GateResponses.refusal(status, fields, format,
        format.body(refusal, format == RefusalFormat.HTML ? ask.request.target() : null), GateResponses.problem(refusal),
        worst.blockSeconds > 0 ? worst.policy.name() : decision.mostConstraining().policy().name());
  }

  /**
   * A quota-exceeded or reduced-capacity refusal of a request that fits the quota: the body kept
   * for the route and policy while its inputs stay the same, with fresh fields; or, on a route of
   * one policy whose fields carry numbers only, the whole answer kept while the numbers stay the
   * same ({@link RefusalBodies}), so a refusal storm costs one lookup per request.
   */
  private GateResponse refuseKept(Ask ask, Decision decision, ProblemType type) {
    RefusalFormat format = RefusalFormat.negotiate(ask.request.header("Accept"));
    String target = format == RefusalFormat.HTML ? ask.request.target() : null;
    long second = ticker.read() / 1_000_000_000L;
    RefusalBodies.Whole whole = null;
    if (decision.outcomes().size() == 1 && ask.route.headers.numbersOnly()) {
      whole = RefusalBodies.whole(decision.outcomes().get(0), decision.retryAfterSeconds(), type, second, format, target);
      GateResponse kept = ask.route.bodies.answer(whole);
      if (kept != null) {
        return kept;
      }
    }
    List<Map.Entry<String, String>> fields = new ArrayList<>();
    Optional<Duration> written = ask.route.headers.write(decision, type.status(), (name, value) ->
        fields.add(Map.entry(name, value)));
    long wait = decision.retryAfterSeconds();
    if (written.isPresent()) {
      wait = Math.max(written.get().getSeconds(), wait);
      if (wait != written.get().getSeconds()) {
        GateResponses.set(fields, HeaderNames.RETRY_AFTER, Long.toString(wait));
      }
    }
    List<PolicyOutcome> violated = decision.violated();
    List<String> names = new ArrayList<>(violated.size());
    for (PolicyOutcome o : violated) {
      names.add(o.policy().name());
    }
    long agreed = wait;
    byte[] body = ask.route.bodies.body(decision.mostConstraining().policy(), names, type, wait, second, format, target,
        () -> format.body(refusals.agreeing(refusals.refusal(decision, type), agreed), target));
    GateResponse answer = GateResponses.refusal(type.status(), fields, format, body, GateResponses.problem(type),
        decision.mostConstraining().policy().name());
    if (whole != null) {
      ask.route.bodies.keep(whole, answer);
    }
    return answer;
  }

  /** Whether a violated policy refuses because the request can never fit its quota (413). */
  private static boolean exceedsQuota(Decision d) {
    for (PolicyOutcome o : d.violated()) {
      if (o.exceedsQuota()) {
        return true;
      }
    }
    return false;
  }

  /** The escalating policy a refusal blocks, if any, and for how long (whole seconds). */
  private record EscalationView(QuotaPolicy policy, long blockSeconds) {}

  /**
   * Counts a refusal towards each violated policy's escalation (headroom-http {@link Escalations});
   * the policy whose escalation this refusal starts, with its block, or none. When two escalating
   * policies start a block with the same refusal, the refusal names the one that blocks longest:
   * its block is the Retry-After sent, so the body's policy and the wait it announces agree (the
   * gateway once named the last one in the route's order, whose shorter block the Retry-After
   * did not say; {@code HttpAdapterSpec} holds every front end to this).
   */
  private EscalationView escalate(Decision decision, List<PartitionKey> keys) {
    EscalationView out = new EscalationView(null, 0);
    if (escalationsByPolicy.isEmpty()) {
      return out;
    }
    long now = ticker.read();
    for (PolicyOutcome o : decision.violated()) {
      Escalation e = escalationsByPolicy.get(o.policy().name());
      if (e == null) {
        continue;
      }
      int i = decision.outcomes().indexOf(o);
      long block = escalations.onRefused(o.policy().name(), e, keys.get(i), now, o.retryAfter().toNanos());
      if (block > 0 && Escalations.seconds(block) > out.blockSeconds) {
        out = new EscalationView(o.policy(), Escalations.seconds(block));
      }
    }
    return out;
  }

  /**
   * What tells a route apart across a reload of the configuration: its key (the gateway's route
   * name), else its methods and template.
   */
  static String identity(RouteRules r) {
    return r.key().orElseGet(() -> new TreeSet<>(r.methods()) + " " + r.template());
  }

  /** The adaptive concurrency of the route of this identity ({@link #identity}); null when none has one. */
  AdaptiveRoute adaptive(String identity) {
    for (CompiledRoute r : routes) {
      if (r.adaptive != null && identity(r.rules).equals(identity)) {
        return r.adaptive;
      }
    }
    return null;
  }

  /** A route with what each request needs precomputed. */
  static final class CompiledRoute {
    final RouteRules rules;
    final Predicate<Object> condition;
    final List<PartitionKeyDerivation> derivations;
    final List<PartitionKeyDerivation> shadowDerivations;
    final RateLimitHeaders headers;
    final boolean countsBytes;
    /** The route's last refusal body per policy. */
    final RefusalBodies bodies = new RefusalBodies();
    /** Tells the gate's listener of a store failure on this route; set once by the gate that owns the route. */
    Consumer<StoreException> failures;
    /** Told that an admitted request's leases were given back; null when nothing records it. Set once by the gate. */
    Consumer<Decision> released;
    /** The route's adaptive concurrency; null when it has none. */
    final AdaptiveRoute adaptive;

    CompiledRoute(RouteRules rules, Predicate<Object> condition, List<PartitionKeyDerivation> derivations,
        List<PartitionKeyDerivation> shadowDerivations, RateLimitHeaders headers, AdaptiveRoute adaptive) {
      this.rules = rules;
      this.condition = condition;
      this.derivations = List.copyOf(derivations);
      this.shadowDerivations = List.copyOf(shadowDerivations);
      this.headers = headers;
      this.adaptive = adaptive;
      this.countsBytes = rules.policies().stream().anyMatch(p -> p.unit() == QuotaUnit.CONTENT_BYTES);
    }

    boolean accepts(Object nativeRequest) {
      return condition == null || condition.test(nativeRequest);
    }
  }
}
