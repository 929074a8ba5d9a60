/**
 * The servlet front end: {@link dev.headroom.servlet.HeadroomFilter}, a servlet {@code Filter} that
 * decides each request through headroom-enforcement's {@link dev.headroom.enforcement.Gate} (its
 * routes, listener and store-failure mode are the gate's; {@link dev.headroom.servlet.Route} is only
 * a gate route with a condition on the servlet request), and writes what the gate decided on the
 * container's response; {@link dev.headroom.servlet.UserResolver} names the authenticated user and
 * {@link dev.headroom.servlet.ErrorBodies} gives the container's own errors Graceful Boundaries
 * bodies. The request and response wrappers live in {@code dev.headroom.servlet.internal}.
 *
 * <h2>How is this designed, and why?</h2>
 * <ul>
 * <li>Paths are matched on the container's decoded, normalised path (servlet path + path info),
 * never the raw request URI, so {@code %2e}-style encodings cannot step around a route; empty
 * segments (a trailing slash, {@code //}) are ignored, as by every front end (headroom-http
 * PathTemplate).
 * <li>Headers of allowed requests are written when the response is about to be committed, for the
 * status the application set ({@code LimitedResponse}): at {@code sendError} (its status),
 * {@code sendRedirect} (302), {@code flushBuffer}, the first write/flush/close of the stream or
 * writer (obtaining them commits nothing), {@code AsyncContext.complete()} of a context started
 * through the limited request, the end of an {@code ASYNC} dispatch, or the end of the request.
 * {@code reset()} clears them and they are written again at the next commit point. So
 * {@code omitOnRedirect} (draft-09 section 6) and {@code onlyNearExhaustion} apply to the real
 * response. {@code startAsync()} starts the context with the limited request and response (not the
 * container's originals), so what another thread writes through {@code AsyncContext.getResponse()}
 * still passes through it. Limit: a response the container commits without passing through the
 * wrapper (the application writing to a response object it kept from before the filter, or a
 * forward whose target writes nothing, which the container closes itself) carries no fields. Jitter
 * ({@code jitter}, {@code headroom.headers.jitter}) is drawn once per response; a refusal's body
 * ({@code retryAfterSeconds}, {@code windowResetAt}, detail) is made to agree with the Retry-After
 * {@code RateLimitHeaders.write} returned. Refusals use headroom-http only:
 * {@code RateLimitHeaders} for fields and Retry-After, {@code LimitRefusals} +
 * {@code RefusalFormat} for the body (HTML when preferred, with the refused URL as its JSON
 * alternate), {@code Cache-Control: no-store}, {@code Vary: Accept}.
 * <li>Completion: a request wrapper registers an {@code AsyncListener} the moment the application
 * calls {@code startAsync} (and re-registers on a new async cycle); a synchronous request completes
 * when the chain returns. Completion charges {@code content-bytes} counted by a response wrapper
 * (output stream and an unbuffered encoding writer) and releases concurrency leases, exactly once.
 * Bytes discarded by {@code resetBuffer()}/{@code reset()} are not charged (those succeed only
 * while nothing has been sent, so the count restarts at zero); HEAD requests, which a GET route
 * also limits, are never charged bytes (RFC 9110 section 9.3.2). Requests of {@code content-bytes}
 * policies are acquired at cost 0, as in the gateway: refused only while in debt.
 * <li>Only {@code REQUEST} dispatches are limited; forwards, includes, error and async
 * re-dispatches pass.
 * <li>Store failure: {@code allow} (default, no headers) or {@code refuse} (503
 * {@code temporary-reduced-capacity}, {@code Retry-After: 2}, the body the gateway sends:
 * headroom-http {@code ServiceErrors.storeUnavailable}); listeners (Micrometer) hear both.
 * <li>Parity with the gateway, defined once in headroom-enforcement and called by each front end:
 * escalation ({@code Escalations}: a blocked partition is refused 429
 * {@code abnormal-usage-detected} before the store is asked), run-time capacity
 * ({@code CapacityReductions}; the filter's {@code reduceCapacity}, the gateway's admin
 * {@code /capacity}), route field rules ({@code FieldRules}: jitter, near exhaustion, ratio cap;
 * a route's own rule wins over the filter's), {@code listed}, and the refusal fields
 * ({@code RefusalFormat.refusalFields}). Vend routes ({@code VendRoute}, {@code VendCalls}): the
 * envelope read whole and replayed to the application ({@code ReplayedRequest}), decided by
 * headroom-vend's {@code VendRateLimiter}, refused with {@code VendDecision.refuse}, and the
 * application's response buffered ({@code BufferedResponse}) so that {@code VendDecision.decorate}
 * can insert the extension data, as the gateway's {@code VendRelay} does; the starter adds every
 * {@code VendRoute} bean. {@code HttpAdapterSpec} asserts each on Tomcat, Jetty, Undertow, the
 * starter and the gateway.
 * <li>Error bodies (Graceful Boundaries section 6): the filter's opt-in {@code errorBodies} wraps
 * the response so that {@code sendError} and an exception let through before anything was sent are
 * answered with {@code ServiceErrors.forStatus} bodies ({@code ErrorBodies.write}); the starter
 * answers Spring's error page with {@code HeadroomErrorController} (an auto-configuration ordered
 * before {@code ErrorMvcAutoConfiguration}, so that Spring's {@code BasicErrorController} backs
 * off) and completes Spring MVC's {@code ProblemDetail}s ({@code HeadroomProblemDetails}, a
 * {@code ResponseBodyAdvice}). The demo's {@code DemoConformanceTest} runs
 * {@code headroom check --probe} against it and asserts level 4, as declared.
 * <li>{@code HeadroomFilter.Builder.plans(Plans, PlanResolver, deadline)}: the resolver is waited
 * for on the request's thread (a servlet request holds one anyway) within the deadline; the same
 * declared outcomes as the gateway. Spring Boot binds
 * {@code headroom.plans.*} ({@code HeadroomPlanProperties}, its own
 * <code>&#64;ConfigurationProperties</code> so the metadata is generated) and needs one
 * {@code PlanResolver} bean.
 * <li>{@code RuntimeLimits} replaces a policy by name (same name: counters carry on) and rebuilds
 * the discovery document; a change is checked against every plan before
 * it is taken, and reaches the plans as {@code Plans.policy} says. The {@code headroom} actuator
 * endpoint is a thin shell on it (a change that is not valid is
 * {@code InvalidEndpointRequestException}, 400).
 * <li>Allow lists and shadow fields: {@code HeadroomFilter.Builder.allow(policy, AllowList)}
 * (starter: {@code headroom.policies.NAME.allow.*}) and
 * {@code Route.Builder.shadowPolicy(policy, true)} (starter:
 * {@code headroom.routes[].shadow-fields}), matched and written by the same headroom-enforcement
 * classes as the gateway's ({@code AllowList}, {@code ShadowFields}); the gate keeps them in
 * {@code AllowLists}, apart from its request path.
 * </ul>
 *
 * <p>May use: headroom-enforcement, headroom-vend, headroom-plans,
 * headroom-http, headroom-core and the Jakarta Servlet API (provided). Never the gateway.
 */
package dev.headroom.servlet;
