/**
 * Spring's HTTP clients on the client's budget engine: a blocking
 * {@link dev.headroom.client.spring.BudgetRequestInterceptor} for {@code RestClient} and
 * {@code RestTemplate}, and a non-blocking {@link dev.headroom.client.spring.BudgetExchangeFilter}
 * for {@code WebClient}.
 *
 * <p>May use: headroom-client, Spring Web, Spring WebFlux and Reactor.
 */
package dev.headroom.client.spring;
