package dev.headroom.spring.boot;

import dev.headroom.QuotaLimiter;
import dev.headroom.Ticker;
import dev.headroom.enforcement.Gate;
import dev.headroom.enforcement.GateBuilder;
import dev.headroom.enforcement.GateListener;
import dev.headroom.enforcement.plan.PlanResolver;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.vend.VendRoute;
import dev.headroom.webflux.HeadroomWebFilter;
import dev.headroom.webflux.ReactiveUserResolver;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;

/**
 * Installs the Headroom WebFlux filter ({@link HeadroomWebFilter}, headroom-webflux) in a Spring
 * Boot reactive web application, configured from the same {@code headroom.*} properties as the
 * servlet filter ({@link HeadroomProperties}: policies, routes, dialects, headers, escalations,
 * store, plans, discovery; {@code headroom.filter-order} is the web filter's order), and from the
 * application's own beans where it defines them: the {@link dev.headroom.Store}, a
 * {@link ReactiveUserResolver} (the exchange's principal otherwise), {@link GateListener}s, and
 * {@link VendRoute}s. Error bodies are Spring Boot's own error handling's.
 *
 * The application's {@code MeterRegistry} and {@code ObservationRegistry} are given to the gate, as
 * in a servlet application ({@link HeadroomObservabilityConfiguration}): the same meters and
 * observations. {@link RateLimited} handler methods of WebFlux {@code @RestController}s become routes
 * as in a servlet application: read from WebFlux's {@code RequestMappingHandlerMapping}s, each
 * applying only to requests its own handler serves ({@link ReactiveHandlerResolution}).
 */
@AutoConfiguration(afterName = {
    "org.springframework.boot.autoconfigure.web.reactive.WebFluxAutoConfiguration", // Spring Boot 3
    "org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration", // Spring Boot 4
    // after the availability probes, whose readiness group the headroom contributor may join (ReadinessGroups) (Boot 3, Boot 4)
    "org.springframework.boot.actuate.autoconfigure.availability.AvailabilityProbesAutoConfiguration",
    "org.springframework.boot.health.autoconfigure.actuate.endpoint.AvailabilityProbesAutoConfiguration"})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass({HeadroomWebFilter.class, WebFilter.class})
@ConditionalOnProperty(prefix = "headroom", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties({HeadroomProperties.class, HeadroomPlanProperties.class})
@Import(HeadroomCommonConfiguration.class)
public class HeadroomReactiveAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  ReactiveUserResolver headroomReactiveUserResolver() {
    return ReactiveUserResolver.principal();
  }

  @Bean
  HeadroomWebFilter headroomWebFilter(HeadroomProperties props, HeadroomAutoConfiguration.HeadroomPolicies policies,
      QuotaLimiter limiter, LimitRefusals refusals, Ticker ticker, ReactiveUserResolver users,
      ObjectProvider<GateListener> listeners, ObjectProvider<VendRoute> vendRoutes, Environment environment,
      HeadroomPlanProperties planProps, ObjectProvider<PlanResolver> planResolvers,
      ObjectProvider<HeadroomGateCustomizer> customizers, ObjectProvider<RequestMappingHandlerMapping> mappings,
      ObjectProvider<HandlerMapping> handlerMappings) {
    GateBuilder<ServerWebExchange> g = Gate.builder();
    policies.settings().gate(g, props, limiter, refusals, ticker, environment, planProps, planResolvers);
    policies.settings().routes().forEach(g::route);
    ReactiveHandlerResolution resolution = new ReactiveHandlerResolution(handlerMappings);
    mappings.orderedStream().forEach(m -> RateLimitedHandlers.<ServerWebExchange>routes(
        RateLimitedHandlers.WebFlux.mappings(m), policies.byName(), resolution::runs)
        .forEach(h -> g.route(h.rules(), h.condition())));
    g.listener(HeadroomSettings.composite(listeners.orderedStream().toList()));
    customizers.orderedStream().forEach(c -> c.customize(g));
    Gate<ServerWebExchange> gate;
    try {
      gate = g.build();
    } catch (HeadroomConfigurationException ex) {
      throw ex;
    } catch (IllegalArgumentException ex) {
      throw new HeadroomConfigurationException("headroom", ex.getMessage(), "a consistent configuration", ex);
    }
    HeadroomWebFilter.Builder b = HeadroomWebFilter.builder(gate).users(users).order(props.getFilterOrder());
    vendRoutes.orderedStream().forEach(b::vendRoute);
    return b.build();
  }

  /** The {@code headroom} actuator endpoint, when actuator is on the classpath and the endpoint is available. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.annotation.Endpoint")
  static class EndpointConfiguration {

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnAvailableEndpoint
    HeadroomEndpoint headroomEndpoint(HeadroomWebFilter headroomWebFilter) {
      return new HeadroomEndpoint(headroomWebFilter.gate());
    }
  }
}
