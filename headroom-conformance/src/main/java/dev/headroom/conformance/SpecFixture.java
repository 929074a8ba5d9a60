package dev.headroom.conformance;

import dev.headroom.Algorithm;
import dev.headroom.InMemoryStore;
import dev.headroom.ManualTicker;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.enforcement.Escalation;
import dev.headroom.enforcement.RouteRules;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.PolicyTexts;
import dev.headroom.http.headers.FieldRules;
import dev.headroom.http.headers.HeaderDialect;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The configuration every adapter under the {@link HttpAdapterSpec} runs: routes, policies, texts,
 * a manual clock and a recording store. An adapter's test translates it into its own configuration
 * (filter routes, gateway routes) and implements the {@link SpecEndpoint}s behind the routes.
 *
 * <h2>Routes</h2>
 * <table>
 * <caption>The routes of the specification</caption>
 * <tr><th>route</th><th>policies</th><th>dialects</th><th>endpoint</th></tr>
 * <tr><td>{@code GET /spec/items/{id}}</td><td>items: 3 requests / 60 s per API key</td><td>ietf</td><td>OK</td></tr>
 * <tr><td>{@code GET /spec/ip}</td><td>per-ip: 2 requests / 60 s per client address</td><td>ietf</td><td>OK</td></tr>
 * <tr><td>{@code GET /spec/dialect/<token>}, one per {@link HeaderDialect}</td><td>d-token: 2 requests / 60 s
 *   per API key</td><td>that one</td><td>OK</td></tr>
 * <tr><td>{@code POST /spec/multi}</td><td>multi-wide: 5 / 60 s and multi-narrow: 2 / 60 s, per API key</td>
 *   <td>ietf and x-ratelimit</td><td>OK</td></tr>
 * <tr><td>{@code GET /spec/me}</td><td>per-user: 2 requests / 60 s per user</td><td>ietf</td><td>OK</td></tr>
 * <tr><td>{@code GET /spec/slow}</td><td>slots: 1 concurrent request per API key</td><td>ietf</td><td>BLOCKING</td></tr>
 * <tr><td>{@code GET /spec/slow-async}</td><td>async-slots: 1 concurrent request per API key</td><td>ietf</td>
 *   <td>BLOCKING_ASYNC</td></tr>
 * <tr><td>{@code GET /spec/bytes}</td><td>bytes: 100 content-bytes / 60 s per API key</td><td>ietf</td><td>BYTES</td></tr>
 * <tr><td>{@code GET /spec/moved}</td><td>moved: 5 requests / 60 s per API key</td><td>ietf</td><td>REDIRECT</td></tr>
 * <tr><td>{@code GET /spec/escalating}</td><td>escalating: 1 request / 60 s per API key, escalating
 *   ({@link #ESCALATION})</td><td>ietf</td><td>OK</td></tr>
 * <tr><td>{@code GET /spec/escalating-twice}</td><td>escalating-long and escalating-short: 1 request / 60 s
 *   per API key each, escalating alike but blocking for {@link #ESCALATION}'s and {@link #SHORT_ESCALATION}'s
 *   blocks</td><td>ietf</td><td>OK</td></tr>
 * <tr><td>{@code GET /spec/reducible}</td><td>reducible: 4 requests / 60 s per API key, whose capacity the
 *   specification lowers at run time</td><td>ietf</td><td>OK</td></tr>
 * <tr><td>{@code GET /spec/fragile}</td><td>fragile: 5 requests / 60 s per API key; the store fails every
 *   decision of it (the adapter refuses when its store fails)</td><td>ietf</td><td>OK</td></tr>
 * <tr><td>{@code GET /spec/jitter}</td><td>jittered: 1 request / 60 s per API key, jitter {@link #JITTER}</td>
 *   <td>ietf</td><td>OK</td></tr>
 * <tr><td>{@code GET /spec/near}</td><td>near: 4 requests / 60 s per API key, fields only near exhaustion
 *   ({@link #NEAR_EXHAUSTION})</td><td>ietf</td><td>OK</td></tr>
 * <tr><td>{@code GET /spec/capped}</td><td>capped: token bucket of 10 / 60 s per API key, r/t capped at q/w</td>
 *   <td>ietf</td><td>OK</td></tr>
 * <tr><td>{@code GET /spec/hidden}</td><td>hidden: 2 requests / 60 s per API key, not listed in discovery</td>
 *   <td>ietf</td><td>OK</td></tr>
 * <tr><td>{@code GET, POST /spec/when}</td><td>when-every: 5 requests / 60 s per API key; when-writes: 1
 *   request / 60 s per API key, deciding only POST ({@link SpecRoute#when()})</td><td>ietf</td><td>OK</td></tr>
 * <tr><td>{@code GET /spec/failures}</td><td>failures: 1 request / 60 s per API key, counting only responses
 *   of 400 and up ({@link SpecRoute#counting()})</td><td>ietf</td><td>STATUS</td></tr>
 * <tr><td>{@code GET /spec/charged}</td><td>charged: 10 requests / 60 s per API key, also charged what the
 *   response states in {@link #CHARGE_HEADER} ({@link SpecRoute#chargeHeader()})</td><td>ietf</td><td>STATUS</td></tr>
 * <tr><td>{@code GET /spec/free}</td><td>none (not limited)</td><td>-</td><td>OK</td></tr>
 * </table>
 *
 * <p>Every route's RateLimit fields are left off 3xx responses ({@link #OMIT_ON_REDIRECT}; headroom-http
 * {@code RateLimitHeaders.Builder.omitOnRedirect(true)}): adapters must configure it.
 *
 * <p>Partitions are per API key ({@code X-Api-Key}) so that each test works in partitions of its
 * own against one running server. The user of {@code per-user} is whatever the request's
 * {@value #USER_HEADER} header says: the adapter's host-supplied user callback must read it (it
 * stands for the application's own authentication).
 *
 * <p>Every window is {@link #WINDOW}; the clock starts on a multiple of it and tests only ever move
 * it by whole windows, so a fresh partition always reports {@code t} equal to the window.
 */
public final class SpecFixture {

  /** The header the host's user callback reads in the specification's application. */
  public static final String USER_HEADER = "X-Spec-User";

  /** Whether RateLimit fields are left off 3xx responses (draft-09 section 6); adapters configure it. */
  public static final boolean OMIT_ON_REDIRECT = true;

  /** The window of every policy. */
  public static final Duration WINDOW = Duration.ofSeconds(60);

  /** The service name in the discovery document. */
  public static final String SERVICE = "Headroom specification service";

  /** The service description in the discovery document. */
  public static final String DESCRIPTION = "The application every Headroom adapter is tested against.";

  /** The escalation of {@code /spec/escalating}: two refusals inside the wait block for five minutes. */
  public static final Escalation ESCALATION = new Escalation(2, Duration.ofMinutes(5));

  /**
   * The policies of {@code /spec/escalating-twice}, in the route's order: both escalate with the
   * same threshold, the first for {@link #ESCALATION}'s block, the second for the shorter
   * {@link #SHORT_ESCALATION}, so that one refusal starts both blocks.
   */
  public static final String ESCALATING_LONG = "escalating-long";

  /** The second policy of {@code /spec/escalating-twice}, see {@link #ESCALATING_LONG}. */
  public static final String ESCALATING_SHORT = "escalating-short";

  /** The escalation of {@link #ESCALATING_SHORT}: as {@link #ESCALATION}, blocking for two minutes. */
  public static final Escalation SHORT_ESCALATION = new Escalation(2, Duration.ofMinutes(2));

  /** The policy of {@code /spec/fragile}, whose every decision the store fails. */
  public static final String FRAGILE = "fragile";

  /** The jitter of {@code /spec/jitter} (draft-09 section 8.5). */
  public static final Duration JITTER = Duration.ofSeconds(5);

  /** The near-exhaustion share of {@code /spec/near} (draft-09 section 6.2). */
  public static final double NEAR_EXHAUSTION = 0.5;

  /** Where an adapter that serves vend routes serves one (seed 003), limited per function by {@link #VEND_POLICY}. */
  public static final String VEND_PATH = "/spec/vend";

  /** The policy of {@link #VEND_PATH}'s function scope: one call a minute. */
  public static final String VEND_POLICY = "vend-calls";

  /** The response header {@code /spec/charged} states its units in ({@link SpecEndpoint#STATUS}). */
  public static final String CHARGE_HEADER = "X-Spec-Charge";

  /** The most units {@link #CHARGE_HEADER} may state. */
  public static final long MAX_CHARGE = 100;

  /** The reason given for every limit. */
  public static final String WHY = "Limits keep the service responsive for every caller.";

  private final ManualTicker ticker = ManualTicker.atFixedInstant();
  private final RecordingStore store = new RecordingStore(InMemoryStore.builder().ticker(ticker).build());
  private final QuotaLimiter limiter = QuotaLimiter.of(store);
  private final RequestHold hold = new RequestHold();
  private final LimitRefusals refusals;
  private final List<SpecRoute> routes = new ArrayList<>();

  public SpecFixture() {
    refusals = LimitRefusals.builder().ticker(ticker).defaults(PolicyTexts.builder(WHY).build()).build();
    Set<HeaderDialect> ietf = EnumSet.of(HeaderDialect.IETF);
    routes.add(new SpecRoute("GET", "/spec/items/{id}", List.of(requests("items", 3, "api-key")), ietf, SpecEndpoint.OK));
    routes.add(new SpecRoute("GET", "/spec/ip", List.of(requests("per-ip", 2, "client-ip")), ietf, SpecEndpoint.OK));
    for (HeaderDialect d : HeaderDialect.values()) {
      routes.add(new SpecRoute("GET", "/spec/dialect/" + d.token(), List.of(requests("d-" + d.token(), 2, "api-key")),
          EnumSet.of(d), SpecEndpoint.OK));
    }
    routes.add(new SpecRoute("POST", "/spec/multi",
        List.of(requests("multi-wide", 5, "api-key"), requests("multi-narrow", 2, "api-key")),
        EnumSet.of(HeaderDialect.IETF, HeaderDialect.X_RATELIMIT), SpecEndpoint.OK));
    routes.add(new SpecRoute("GET", "/spec/me", List.of(requests("per-user", 2, "user")), ietf, SpecEndpoint.OK));
    routes.add(new SpecRoute("GET", "/spec/slow", List.of(concurrent("slots")), ietf, SpecEndpoint.BLOCKING));
    routes.add(new SpecRoute("GET", "/spec/slow-async", List.of(concurrent("async-slots")), ietf, SpecEndpoint.BLOCKING_ASYNC));
    routes.add(new SpecRoute("GET", "/spec/bytes", List.of(QuotaPolicy.builder("bytes").quota(100).window(WINDOW)
        .unit(QuotaUnit.CONTENT_BYTES).algorithm(Algorithm.FIXED_WINDOW).partitioning("api-key").build()),
        ietf, SpecEndpoint.BYTES));
    routes.add(new SpecRoute("GET", "/spec/moved", List.of(requests("moved", 5, "api-key")), ietf, SpecEndpoint.REDIRECT));
    // the gateway's behaviour every front end shares (issue 18 item 4), one route each
    routes.add(new SpecRoute("GET", "/spec/escalating", List.of(requests("escalating", 1, "api-key")), ietf,
        SpecEndpoint.OK, FieldRules.none(), true, Map.of("escalating", ESCALATION)));
    routes.add(new SpecRoute("GET", "/spec/escalating-twice",
        List.of(requests(ESCALATING_LONG, 1, "api-key"), requests(ESCALATING_SHORT, 1, "api-key")), ietf,
        SpecEndpoint.OK, FieldRules.none(), true, Map.of(ESCALATING_LONG, ESCALATION,
            ESCALATING_SHORT, SHORT_ESCALATION)));
    routes.add(new SpecRoute("GET", "/spec/reducible", List.of(requests("reducible", 4, "api-key")), ietf, SpecEndpoint.OK));
    routes.add(new SpecRoute("GET", "/spec/fragile", List.of(requests(FRAGILE, 5, "api-key")), ietf, SpecEndpoint.OK));
    routes.add(new SpecRoute("GET", "/spec/jitter", List.of(requests("jittered", 1, "api-key")), ietf, SpecEndpoint.OK,
        FieldRules.none().jitter(JITTER), true, Map.of()));
    routes.add(new SpecRoute("GET", "/spec/near", List.of(requests("near", 4, "api-key")), ietf, SpecEndpoint.OK,
        FieldRules.none().onlyNearExhaustion(NEAR_EXHAUSTION), true, Map.of()));
    routes.add(new SpecRoute("GET", "/spec/capped", List.of(QuotaPolicy.builder("capped").quota(10).window(WINDOW)
        .unit(QuotaUnit.REQUESTS).algorithm(Algorithm.TOKEN_BUCKET).partitioning("api-key").build()), ietf, SpecEndpoint.OK,
        FieldRules.none().capRemainingToResetRatio(1, Duration.ZERO), true, Map.of()));
    // The meaning of t, draft-09 against draft-10 and -11, on a token bucket of 2 a minute.
    for (HeaderDialect d : List.of(HeaderDialect.IETF, HeaderDialect.DRAFT_09)) {
      routes.add(new SpecRoute("GET", "/spec/bucket/" + d.token(), List.of(QuotaPolicy.builder("bucket-" + d.token())
          .quota(2).window(WINDOW).unit(QuotaUnit.REQUESTS).algorithm(Algorithm.TOKEN_BUCKET).partitioning("api-key")
          .build()), EnumSet.of(d), SpecEndpoint.OK));
    }
    routes.add(new SpecRoute("GET", "/spec/hidden", List.of(requests("hidden", 2, "api-key")), ietf, SpecEndpoint.OK,
        FieldRules.none(), false, Map.of()));
    // Rules the gateway's YAML states that every front end's configuration must state too (issue 31).
    routes.add(new SpecRoute("GET", "/spec/when", List.of(requests("when-every", 5, "api-key"),
        requests("when-writes", 1, "api-key")), ietf, SpecEndpoint.OK).onMethods("GET", "POST")
        .when("when-writes", "POST"));
    routes.add(new SpecRoute("GET", "/spec/failures", List.of(requests("failures", 1, "api-key")), ietf,
        SpecEndpoint.STATUS).counting("failures", RouteRules.Counting.FAILURES));
    routes.add(new SpecRoute("GET", "/spec/charged", List.of(requests("charged", 10, "api-key")), ietf,
        SpecEndpoint.STATUS).chargeHeader(CHARGE_HEADER));
    routes.add(new SpecRoute("GET", "/spec/free", List.of(), ietf, SpecEndpoint.OK));
    store.failFor(FRAGILE);
  }

  private static QuotaPolicy requests(String name, long quota, String partitioning) {
    return QuotaPolicy.builder(name).quota(quota).window(WINDOW).unit(QuotaUnit.REQUESTS)
        .algorithm(Algorithm.FIXED_WINDOW).partitioning(partitioning).build();
  }

  private static QuotaPolicy concurrent(String name) {
    return QuotaPolicy.builder(name).quota(1).window(WINDOW).unit(QuotaUnit.CONCURRENT_REQUESTS)
        .algorithm(Algorithm.CONCURRENCY).partitioning("api-key").leaseTimeout(Duration.ofMinutes(5)).build();
  }

  /** The routes, in matching order. */
  public List<SpecRoute> routes() {
    return List.copyOf(routes);
  }

  /** The clock every decision and body reads. */
  public ManualTicker ticker() {
    return ticker;
  }

  /** The store behind {@link #limiter()}, recording releases and charges. */
  public RecordingStore store() {
    return store;
  }

  /** The limiter the adapter must decide with. */
  public QuotaLimiter limiter() {
    return limiter;
  }

  /** The refusal texts the adapter must use. */
  public LimitRefusals refusals() {
    return refusals;
  }

  /** Holds the {@link SpecEndpoint#BLOCKING} endpoints. */
  public RequestHold hold() {
    return hold;
  }
}
