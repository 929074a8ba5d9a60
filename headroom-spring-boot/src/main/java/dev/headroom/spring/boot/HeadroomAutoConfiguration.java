package dev.headroom.spring.boot;

import dev.headroom.InMemoryStore;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.Store;
import dev.headroom.Ticker;
import dev.headroom.enforcement.Gate;
import dev.headroom.enforcement.GateBuilder;
import dev.headroom.enforcement.GateListener;
import dev.headroom.enforcement.plan.PlanResolver;
import dev.headroom.enforcement.plan.Plans;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.servlet.HeadroomFilter;
import dev.headroom.servlet.UserResolver;
import dev.headroom.vend.VendRoute;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.web.servlet.handler.HandlerMappingIntrospector;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

/**
 * Installs the Headroom servlet filter in a Spring Boot servlet application, configured from
 * {@code headroom.*} ({@link HeadroomProperties}), {@link RateLimited} handler methods and the
 * application's own beans where it defines them:
 *
 * <ul>
 * <li>{@link Ticker}: the system clock unless the application (a test) defines one;
 * <li>{@link Store}: the in-memory store ({@code headroom.store.type: in-memory}), or the
 *   application's own {@code Store} bean. {@code headroom.store.type: redis} is the seam for the
 *   headroom-redis module: until that module is on the classpath it stops startup saying so;
 * <li>{@link UserResolver}: the servlet principal unless the application supplies who the user is;
 * <li>the application's {@code MeterRegistry} and {@code ObservationRegistry}, given to the gate, which
 *   records Headroom's meters and observations in them as every front end does
 *   ({@link HeadroomObservabilityConfiguration});
 * <li>{@link GateListener}s (headroom-enforcement): any listener beans of the application;
 * <li>{@link VendRoute}s: every vend route bean of the application (the vend rate-limit extension).
 * </ul>
 */
@AutoConfiguration(afterName = {
    // Spring Boot 3
    "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
    "org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration",
    "org.springframework.boot.autoconfigure.web.servlet.WebMvcAutoConfiguration",
    // after the availability probes, whose readiness group the headroom contributor may join (ReadinessGroups)
    "org.springframework.boot.actuate.autoconfigure.availability.AvailabilityProbesAutoConfiguration",
    // Spring Boot 4 (its modules spring-boot-micrometer-metrics and spring-boot-webmvc)
    "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
    "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration",
    "org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration",
    "org.springframework.boot.health.autoconfigure.actuate.endpoint.AvailabilityProbesAutoConfiguration"})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass({HeadroomFilter.class, Filter.class})
@ConditionalOnProperty(prefix = "headroom", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties({HeadroomProperties.class, HeadroomPlanProperties.class})
@Import(HeadroomCommonConfiguration.class)
public class HeadroomAutoConfiguration {

  /** The validated policies of {@code headroom.policies}, by name. */
  public static final class HeadroomPolicies {
    private final Map<String, QuotaPolicy> byName;
    private final HeadroomSettings settings;

    HeadroomPolicies(HeadroomSettings settings) {
      this.byName = Map.copyOf(settings.policies().policies());
      this.settings = settings;
    }

    /** Everything {@code headroom.*} and {@code headroom.plans.*} say, read and checked at startup. */
    HeadroomSettings settings() {
      return settings;
    }

    /** Every configured policy, by name. */
    public Map<String, QuotaPolicy> byName() {
      return byName;
    }
  }

  @Bean
  @ConditionalOnMissingBean
  UserResolver headroomUserResolver() {
    return UserResolver.principal();
  }

  @Bean
  FilterRegistrationBean<HeadroomFilter> headroomFilter(HeadroomProperties props, HeadroomPolicies policies,
      QuotaLimiter limiter, LimitRefusals refusals, Ticker ticker, UserResolver users,
      ObjectProvider<GateListener> listeners, ObjectProvider<RequestMappingHandlerMapping> mappings,
      ObjectProvider<HandlerMappingIntrospector> introspector, ObjectProvider<VendRoute> vendRoutes,
      Environment environment, HeadroomPlanProperties planProps, ObjectProvider<PlanResolver> planResolvers,
      ObjectProvider<HeadroomGateCustomizer> customizers) {
    GateBuilder<HttpServletRequest> g = Gate.builder();
    policies.settings().gate(g, props, limiter, refusals, ticker, environment, planProps, planResolvers);
    policies.settings().routes().forEach(g::route);
    HandlerMappingIntrospector found = introspector.getIfUnique();
    HandlerResolution resolution = found == null ? null : new HandlerResolution(found);
    mappings.orderedStream().forEach(m -> RateLimitedHandlers.<HttpServletRequest>routes(
        RateLimitedHandlers.Mvc.mappings(m), policies.byName(), resolution == null ? null : resolution::runs)
        .forEach(h -> g.route(h.rules(), h.condition())));
    g.listener(HeadroomSettings.composite(listeners.orderedStream().toList()));
    customizers.orderedStream().forEach(c -> c.customize(g));
    HeadroomFilter filter;
    try {
      HeadroomFilter.Builder b = HeadroomFilter.builder(g.build()).users(users);
      vendRoutes.orderedStream().forEach(b::vendRoute);
      filter = b.build();
    } catch (HeadroomConfigurationException ex) {
      throw ex;
    } catch (IllegalArgumentException ex) {
      throw new HeadroomConfigurationException("headroom", ex.getMessage(), "a consistent configuration", ex);
    }
    FilterRegistrationBean<HeadroomFilter> registration = new FilterRegistrationBean<>(filter);
    registration.setName("headroomFilter");
    registration.setAsyncSupported(true);
    // ASYNC too: an asynchronous dispatch that writes no content still gets its RateLimit fields.
    registration.setDispatcherTypes(DispatcherType.REQUEST, DispatcherType.ASYNC);
    registration.setOrder(props.getFilterOrder());
    registration.addUrlPatterns("/*");
    return registration;
  }

  /** The {@code headroom} actuator endpoint, when actuator is on the classpath and the endpoint is available. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.annotation.Endpoint")
  static class EndpointConfiguration {

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnAvailableEndpoint
    HeadroomEndpoint headroomEndpoint(FilterRegistrationBean<HeadroomFilter> headroomFilter) {
      return new HeadroomEndpoint(headroomFilter.getFilter().gate());
    }
  }

}
