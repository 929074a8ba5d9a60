/**
 * Spring Cloud Gateway: {@link dev.headroom.spring.cloud.gateway.HeadroomRateLimiter} for SCG's own
 * {@code RequestRateLimiter}, and the {@code Headroom} route filter
 * ({@link dev.headroom.spring.cloud.gateway.HeadroomGatewayFilterFactory}) on one gate for every
 * route ({@link dev.headroom.spring.cloud.gateway.HeadroomRoutes}), configured by
 * {@link dev.headroom.spring.cloud.gateway.HeadroomCloudGatewayAutoConfiguration} from
 * {@code headroom.cloud-gateway.*}.
 *
 * <h2>How is this designed, and why?</h2>
 * <ul>
 * <li>Two entry points. {@code HeadroomRateLimiter} is a {@code RateLimiter} for SCG's own
 * {@code RequestRateLimiter} (arguments {@code headroom-rate-limiter.*} bound by SCG's
 * {@code ConfigurationService}, read once per route when the routes load; a bad one stops startup
 * naming it). It sees only a key and a route id, so it decides {@code requests} policies only,
 * partitions by the {@code KeyResolver}'s key (SHA-256 of it, never the raw value), and can only
 * add header fields: RateLimit in the route's dialect and {@code Retry-After};
 * {@code RequestRateLimiter} writes its bare status. The {@code Headroom} filter is the whole
 * behaviour.
 * <li>One gate for every route. {@code HeadroomRoutes} keeps each SCG route's {@code RouteRules}
 * (registered by {@code HeadroomGatewayFilterFactory.apply}, conditioned on the SCG route id, which
 * the gate's route condition reads from {@code GATEWAY_ROUTE_ATTR}) and builds one
 * headroom-enforcement {@code Gate} from all of them; it is rebuilt when routes load or refresh,
 * carrying capacity reductions over (escalation blocks start afresh then). The template of
 * {@code path} (default {@code /**}) is matched too, and published in discovery under the route id.
 * Discovery is a {@code WebFilter} for the conventional paths, because SCG runs route filters only
 * for requests a route's predicates match.
 * <li>Non-blocking: {@code Gate.decideAsync} (Lettuce's asynchronous API for Redis); a decision
 * completed on the store's I/O thread continues on Reactor's parallel scheduler; completion
 * ({@code completeAsync}: bytes charged, leases released) is fire-and-forget.
 * {@code NonBlockingTest} installs BlockHound and fails on any blocking call with a Headroom or
 * Lettuce frame on a non-blocking thread.
 * <li>Order: the filter runs before {@code NettyWriteResponseFilter} (order -1), which writes the
 * upstream's response through the exchange it was handed; running after it, the byte-counting
 * response decorator would never see the bytes. Fields are added at {@code beforeCommit}, for the
 * upstream's status. HEAD is limited as the GET route's request (its route predicate must admit
 * HEAD).
 * <li>The writing is headroom-webflux's: {@code HeadroomRoutes} builds a {@code HeadroomWebFilter}
 * on the gate (with the routes' vend routes, {@code vend: {SCOPE: POLICY}}), and the route filter
 * calls it with the gateway chain as its {@code WebFilterChain}. Nothing of the exchange handling
 * is written twice.
 * </ul>
 *
 * <p>May use: headroom-webflux (and what it may use), headroom-redis (optional) and Spring Cloud
 * Gateway (provided).
 */
package dev.headroom.spring.cloud.gateway;
