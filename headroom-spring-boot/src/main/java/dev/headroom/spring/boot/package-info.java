/**
 * The Spring Boot starter: {@link dev.headroom.spring.boot.HeadroomAutoConfiguration} (servlet) and
 * {@link dev.headroom.spring.boot.HeadroomReactiveAutoConfiguration} (WebFlux) build the front end
 * from the {@code headroom.*} properties and from {@link dev.headroom.spring.boot.RateLimited}
 * handler methods; errors name the property
 * ({@link dev.headroom.spring.boot.HeadroomConfigurationException}); the {@code headroom} actuator
 * endpoint ({@link dev.headroom.spring.boot.HeadroomEndpoint}) changes limits at run time.
 *
 * <h2>How is this designed, and why?</h2>
 * <ul>
 * <li>One enforcement point: a servlet {@code Filter} ({@code HeadroomFilter}). Spring Boot only
 * configures it; <code>&#64;RateLimited</code> handler methods are read from Spring MVC's
 * {@code RequestMappingHandlerMapping} at startup and become ordinary filter routes (most specific
 * pattern first), so annotated and configured routes are limited, counted and published by the same
 * code. Each annotated route also carries a condition ({@code Route.Builder.condition}): before
 * deciding, the filter asks Spring MVC which handler will serve the request (the
 * {@code DispatcherServlet}'s handler mappings in order, from {@code HandlerMappingIntrospector},
 * on a request view with its own attributes, once per request) and applies the route only when that
 * handler is the annotated method. So a more specific unannotated pattern
 * ({@code /api/items/health} beside an annotated {@code /api/items/{id}}) or a mapping condition
 * templates cannot express ({@code params}, {@code headers}, {@code consumes}) is not limited by an
 * annotated template. Cost: one extra handler lookup for requests matching an annotated template. A
 * request Spring refuses itself (405/406/415) has no handler and is not limited.
 * <li>Spring Boot: {@code headroom.*} is validated into core, http and enforcement values at
 * startup; every error is a {@code HeadroomConfigurationException} naming property, value and
 * expectation, printed by a {@code FailureAnalyzer}. Beans the application defines win
 * ({@code Ticker}, {@code Store}, {@code QuotaLimiter}, {@code LimitRefusals},
 * {@code UserResolver}). The Spring Boot BOM (3.4.x) is imported only by the starter and the
 * example. {@code headroom.store.type: redis} builds a {@code RedisStore} from
 * {@code headroom.store.redis-uri} (and {@code headroom.store.refusal-memory}) when headroom-redis
 * (an optional dependency of the starter) is on the classpath, and otherwise fails startup saying
 * the module is missing; an application {@code Store} bean replaces either.
 * </ul>
 *
 * <p>May use: headroom-servlet, headroom-webflux, headroom-redis (optional) and what they may use;
 * Spring Boot, Spring MVC, Spring WebFlux and Micrometer.
 */
package dev.headroom.spring.boot;
