package dev.headroom.spring.boot;

import dev.headroom.InMemoryStore;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaLimiter;
import dev.headroom.Store;
import dev.headroom.StoreException;
import dev.headroom.Ticker;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.servlet.DecisionListener;
import dev.headroom.servlet.HeadroomFilter;
import dev.headroom.servlet.Route;
import dev.headroom.vend.VendRoute;
import dev.headroom.servlet.UserResolver;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import dev.headroom.http.plan.PlanResolver;
import dev.headroom.http.plan.Plans;
import java.util.Optional;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
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
 * <li>{@link DecisionListener}s: Micrometer counters when a {@code MeterRegistry} exists, plus any
 *   listener beans of the application;
 * <li>{@link VendRoute}s: every vend route bean of the application (the vend rate-limit extension).
 * </ul>
 */
@AutoConfiguration(afterName = {
    "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
    "org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration",
    "org.springframework.boot.autoconfigure.web.servlet.WebMvcAutoConfiguration"})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass({HeadroomFilter.class, jakarta.servlet.Filter.class})
@ConditionalOnProperty(prefix = "headroom", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties({HeadroomProperties.class, HeadroomPlanProperties.class})
public class HeadroomAutoConfiguration {

  /** The validated policies of {@code headroom.policies}, by name. */
  public static final class HeadroomPolicies {
    private final Map<String, QuotaPolicy> byName;

    HeadroomPolicies(Map<String, QuotaPolicy> byName) {
      this.byName = Map.copyOf(byName);
    }

    /** Every configured policy, by name. */
    public Map<String, QuotaPolicy> byName() {
      return byName;
    }
  }

  @Bean
  @ConditionalOnMissingBean
  Ticker headroomTicker() {
    return Ticker.system();
  }

  @Bean
  HeadroomPolicies headroomPolicies(HeadroomProperties props) {
    return new HeadroomPolicies(HeadroomSettings.policies(props));
  }

  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  Store headroomStore(HeadroomProperties props, Ticker ticker) {
    String type = props.getStore().getType() == null ? "" : props.getStore().getType().toLowerCase(Locale.ROOT);
    switch (type) {
      case "in-memory":
        if (props.getStore().getMaxKeys() < 1) {
          throw new HeadroomConfigurationException("headroom.store.max-keys", props.getStore().getMaxKeys(),
              "a number of partitions of at least 1");
        }
        return InMemoryStore.builder().ticker(ticker).maxKeys(props.getStore().getMaxKeys()).build();
      case "redis":
        // RedisStoreConfiguration makes the store when headroom-redis is on the classpath.
        throw new HeadroomConfigurationException("headroom.store.type", props.getStore().getType(),
            "in-memory, or a Store bean of the application's own: the redis store needs the headroom-redis module "
                + "(dev.headroom:headroom-redis), which is not on the classpath");
      default:
        throw new HeadroomConfigurationException("headroom.store.type", props.getStore().getType(), "in-memory or redis");
    }
  }

  @Bean
  @ConditionalOnMissingBean
  QuotaLimiter headroomQuotaLimiter(Store store) {
    return QuotaLimiter.of(store);
  }

  @Bean
  @ConditionalOnMissingBean
  LimitRefusals headroomRefusals(HeadroomProperties props, Ticker ticker, HeadroomPlanProperties plans,
      HeadroomPolicies policies) {
    return HeadroomSettings.refusals(props, ticker, HeadroomPlanSettings.plans(plans, policies.byName()));
  }

  @Bean
  @ConditionalOnMissingBean
  UserResolver headroomUserResolver() {
    return UserResolver.principal();
  }

  @Bean
  FilterRegistrationBean<HeadroomFilter> headroomFilter(HeadroomProperties props, HeadroomPolicies policies,
      QuotaLimiter limiter, LimitRefusals refusals, Ticker ticker, UserResolver users,
      ObjectProvider<DecisionListener> listeners, ObjectProvider<RequestMappingHandlerMapping> mappings,
      ObjectProvider<HandlerMappingIntrospector> introspector, ObjectProvider<VendRoute> vendRoutes,
      Environment environment, HeadroomPlanProperties planProps, ObjectProvider<PlanResolver> planResolvers) {
    List<Route> routes = new ArrayList<>(HeadroomSettings.routes(props, policies.byName()));
    HandlerMappingIntrospector found = introspector.getIfUnique();
    HandlerResolution resolution = found == null ? null : new HandlerResolution(found);
    mappings.orderedStream().forEach(m -> routes.addAll(RateLimitedHandlers.routes(m, policies.byName(), resolution)));
    List<DecisionListener> all = listeners.orderedStream().toList();
    HeadroomFilter.Builder b = HeadroomFilter.builder()
        .limiter(limiter)
        .refusals(refusals)
        .ticker(ticker)
        .users(users)
        .routes(routes)
        .dialects(HeadroomSettings.dialects("headroom.dialects", props.getDialects()))
        .exposure(HeadroomSettings.exposure(props))
        .clientAddresses(HeadroomSettings.clientAddresses(props))
        .storeFailureMode(HeadroomSettings.onFailure(props))
        .listener(composite(all));
    HeadroomSettings.headers(props, b);
    HeadroomSettings.escalations(props, b);
    vendRoutes.orderedStream().forEach(b::vendRoute);
    Optional<Plans> plans = HeadroomPlanSettings.plans(planProps, policies.byName());
    if (plans.isPresent()) {
      PlanResolver resolver = planResolvers.getIfUnique();
      if (resolver == null) {
        throw new HeadroomConfigurationException("headroom.plans.catalog", planProps.getCatalog().keySet(),
            "one PlanResolver bean that finds a request's plan (headroom-plans: ApiKeyFileResolver, JwtResolver, "
                + "SqlResolver)");
      }
      b.plans(plans.get(), resolver, planProps.getDeadline());
    }
    if (props.getDiscovery().isEnabled()) {
      String name = props.getService().getName() != null ? props.getService().getName()
          : environment.getProperty("spring.application.name", "application");
      b.discovery(name, props.getService().getDescription());
      try {
        b.discoveryPaths(props.getDiscovery().getPaths());
      } catch (IllegalArgumentException ex) {
        throw new HeadroomConfigurationException("headroom.discovery.paths", props.getDiscovery().getPaths(),
            "paths starting with /", ex);
      }
      if (props.getDiscovery().getChangelog() != null) {
        String changelog = props.getDiscovery().getChangelog();
        b.discoveryCustomizer(d -> d.changelog(changelog));
      }
    }
    HeadroomFilter filter;
    try {
      filter = b.build();
    } catch (IllegalArgumentException ex) {
      throw new HeadroomConfigurationException("headroom", ex.getMessage(), "a consistent configuration", ex);
    }
    FilterRegistrationBean<HeadroomFilter> registration = new FilterRegistrationBean<>(filter);
    registration.setName("headroomFilter");
    registration.setAsyncSupported(true);
    // ASYNC too: an asynchronous dispatch that writes no content still gets its RateLimit fields.
    registration.setDispatcherTypes(jakarta.servlet.DispatcherType.REQUEST, jakarta.servlet.DispatcherType.ASYNC);
    registration.setOrder(props.getFilterOrder());
    registration.addUrlPatterns("/*");
    return registration;
  }

  private static DecisionListener composite(List<DecisionListener> listeners) {
    if (listeners.isEmpty()) {
      return DecisionListener.none();
    }
    if (listeners.size() == 1) {
      return listeners.get(0);
    }
    return new DecisionListener() {
      @Override
      public void decided(Route route, dev.headroom.Decision decision) {
        for (DecisionListener l : listeners) {
          try {
            l.decided(route, decision);
          } catch (RuntimeException ignored) {
            // One listener cannot keep the others from hearing (DecisionListener contract).
          }
        }
      }

      @Override
      public void storeFailed(Route route, StoreException failure) {
        for (DecisionListener l : listeners) {
          try {
            l.storeFailed(route, failure);
          } catch (RuntimeException ignored) {
            // As above.
          }
        }
      }
    };
  }

  /**
   * The Redis store ({@code headroom.store.type: redis}), when headroom-redis is on the classpath:
   * one Lua round trip per decision, Redis time (so the application's {@link Ticker} is not used),
   * failures surfacing as {@code StoreException} for {@code headroom.store.on-failure}. Processed
   * before the outer class's store bean, which it therefore replaces.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "dev.headroom.redis.RedisStore")
  @ConditionalOnProperty(prefix = "headroom.store", name = "type", havingValue = "redis")
  static class RedisStoreConfiguration {

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    Store headroomStore(HeadroomProperties props) {
      try {
        return dev.headroom.redis.RedisStore.builder().uri(props.getStore().getRedisUri()).build();
      } catch (IllegalArgumentException ex) {
        throw new HeadroomConfigurationException("headroom.store.redis-uri", props.getStore().getRedisUri(),
            "a Redis URI such as redis://127.0.0.1:6379", ex);
      }
    }
  }

  /** The {@code headroom} actuator endpoint, when actuator is on the classpath and the endpoint is available. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.annotation.Endpoint")
  static class EndpointConfiguration {

    @Bean
    @ConditionalOnMissingBean
    @org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint
    HeadroomEndpoint headroomEndpoint(FilterRegistrationBean<HeadroomFilter> headroomFilter) {
      return new HeadroomEndpoint(headroomFilter.getFilter().limits());
    }
  }

  /** Micrometer counters, when Micrometer and a registry are present. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(MeterRegistry.class)
  static class MetricsConfiguration {

    @Bean
    @ConditionalOnBean(MeterRegistry.class)
    @ConditionalOnMissingBean
    MicrometerDecisionListener headroomMetrics(MeterRegistry registry) {
      return new MicrometerDecisionListener(registry);
    }
  }
}
