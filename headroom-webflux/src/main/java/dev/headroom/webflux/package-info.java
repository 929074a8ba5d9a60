/**
 * The Spring WebFlux front end: {@link dev.headroom.webflux.HeadroomWebFilter}, a non-blocking
 * {@code WebFilter} that writes what headroom-enforcement's {@link dev.headroom.enforcement.Gate}
 * decides (asynchronously, on the store's asynchronous API), with
 * {@link dev.headroom.webflux.ReactiveUserResolver} naming the user without blocking. Spring Cloud
 * Gateway's {@code Headroom} filter calls this filter with its own chain, so the exchange handling
 * is written once.
 *
 * <p>May use: headroom-enforcement, headroom-vend, headroom-plans, headroom-http, headroom-core and
 * Spring WebFlux (provided). Never the gateway.
 */
package dev.headroom.webflux;
