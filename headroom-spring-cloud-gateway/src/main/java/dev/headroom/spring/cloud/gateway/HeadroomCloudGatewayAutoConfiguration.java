package dev.headroom.spring.cloud.gateway;

import dev.headroom.InMemoryStore;
import dev.headroom.QuotaLimiter;
import dev.headroom.Store;
import dev.headroom.Ticker;
import dev.headroom.enforcement.DecisionMeters;
import dev.headroom.enforcement.Gate;
import dev.headroom.enforcement.GateBuilder;
import dev.headroom.enforcement.settings.StoreSettings;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.redis.FailurePolicy;
import dev.headroom.redis.RedisStore;
import dev.headroom.webflux.ReactiveUserResolver;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.cloud.gateway.config.GatewayAutoConfiguration;
import org.springframework.cloud.gateway.filter.ratelimit.AbstractRateLimiter;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.web.server.ServerWebExchange;
import reactor.netty.http.HttpResources;
import reactor.netty.resources.LoopResources;

/**
 * Headroom in a Spring Cloud Gateway application, from {@code headroom.cloud-gateway.*}:
 *
 * <ul>
 * <li>{@link Store}: the in-memory store ({@code store.type: in-memory}, the default), the Redis
 *   store ({@code store.type: redis}, with headroom-redis on the classpath), or the application's
 *   own {@code Store} bean;</li>
 * <li>{@link HeadroomRateLimiter}, the (primary) {@code RateLimiter} of every
 *   {@code RequestRateLimiter} filter that names none, unless the application defines a
 *   {@code RateLimiter} of its own;</li>
 * <li>a {@link Ticker} (the system's; a {@code ManualTicker} bean in tests replaces it);</li>
 * <li>where the application has a Micrometer {@code MeterRegistry} (and micrometer-core, which is
 *   optional here, is on the class path), the meters every Headroom front end records
 *   (headroom-enforcement {@code HeadroomMeters}), by the {@code Headroom} filter and by
 *   {@link HeadroomRateLimiter} alike; where it has an {@code ObservationRegistry}, each decision of
 *   the {@code Headroom} filter a {@code headroom.decision} observation.</li>
 * </ul>
 *
 * <p>{@code headroom.cloud-gateway.enabled: false} turns all of it off.
 */
@AutoConfiguration(before = GatewayAutoConfiguration.class,
    beforeName = "org.springframework.cloud.gateway.config.GatewayRedisAutoConfiguration")
@ConditionalOnClass(AbstractRateLimiter.class)
@ConditionalOnProperty(prefix = "headroom.cloud-gateway", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(CloudGatewayProperties.class)
public class HeadroomCloudGatewayAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  Ticker headroomTicker() {
    return Ticker.system();
  }

  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  Store headroomStore(CloudGatewayProperties props, Ticker ticker) {
    String type = props.getStore().getType() == null ? "" : props.getStore().getType().toLowerCase(Locale.ROOT);
    switch (type) {
      case "in-memory":
        if (props.getStore().getMaxKeys() < 1) {
          throw new CloudGatewayConfigurationException("headroom.cloud-gateway.store.max-keys",
              props.getStore().getMaxKeys(), "a positive number of partitions");
        }
        return InMemoryStore.builder().ticker(ticker).maxKeys(props.getStore().getMaxKeys()).build();
      case "redis":
        // RedisStoreConfiguration makes the store when headroom-redis is on the classpath.
        throw new CloudGatewayConfigurationException("headroom.cloud-gateway.store.type", props.getStore().getType(),
            "in-memory, or a Store bean of the application's own: the redis store needs the headroom-redis module "
                + "(dev.headroom:headroom-redis), which is not on the classpath");
      default:
        throw new CloudGatewayConfigurationException("headroom.cloud-gateway.store.type", props.getStore().getType(),
            "in-memory or redis");
    }
  }

  @Bean
  @ConditionalOnMissingBean
  QuotaLimiter headroomQuotaLimiter(Store store) {
    return QuotaLimiter.of(store);
  }

  @Bean
  PolicyCatalog headroomPolicyCatalog(CloudGatewayProperties props) {
    return PolicyCatalog.from(props);
  }

  /**
   * Primary: Spring Cloud Gateway's Redis auto-configuration still makes its {@code RedisRateLimiter}
   * when Spring Data Redis is present (its condition looks for a {@code RedisRateLimiter} only), and
   * {@code RequestRateLimiter} takes the one primary {@code RateLimiter}; a route can still name
   * {@code #{@redisRateLimiter}}.
   */
  @Bean
  @Primary
  @ConditionalOnMissingBean(RateLimiter.class)
  HeadroomRateLimiter headroomRateLimiter(QuotaLimiter limiter, PolicyCatalog catalog, CloudGatewayProperties props,
      ConfigurationService configurationService, ObjectProvider<CloudGatewayMeters> meters, Ticker ticker,
      ObjectProvider<ServerLoops> serverLoops) {
    CloudGatewayMeters m = meters.getIfUnique();
    return new HeadroomRateLimiter(limiter, catalog, catalog.dialects(), refuseOnStoreFailure(props),
        configurationService, m == null ? null : m.decisions(), ticker, serverLoops.getIfUnique());
  }

  /**
   * The Headroom routes and the gate that enforces them (the {@code Headroom} filter's); its meters
   * in the application's {@code MeterRegistry} ({@link CloudGatewayMeters}), and each decision a
   * {@code headroom.decision} observation in its {@code ObservationRegistry}, when it has them
   * (headroom-enforcement {@code HeadroomMeters}).
   */
  @Bean
  @ConditionalOnMissingBean
  HeadroomRoutes headroomRoutes(QuotaLimiter limiter, PolicyCatalog catalog, CloudGatewayProperties props, Ticker ticker,
      ObjectProvider<ReactiveUserResolver> users, ObjectProvider<ObservationRegistry> observations,
      ObjectProvider<CloudGatewayMeters> meters) {
    Gate.StoreFailureMode onFailure = refuseOnStoreFailure(props) ? Gate.StoreFailureMode.REFUSE : Gate.StoreFailureMode.ALLOW;
    LimitRefusals texts = catalog.policies().refusals(ticker).build();
    return new HeadroomRoutes(b -> {
      b.limiter(limiter).refusals(texts).ticker(ticker).dialects(catalog.dialects()).storeFailureMode(onFailure)
          .omitOnRedirect(props.getHeaders().isOmitOnRedirect()).fields(catalog.fields())
          .discovery(props.getService().getName(), props.getService().getDescription());
      observations.ifUnique(b::observationRegistry);
      meters.ifUnique(m -> m.bind(b));
    }, catalog.policies().escalations(), catalog.policies().allowLists(), users.getIfAvailable(ReactiveUserResolver::principal));
  }

  /** {@code Headroom} in a route's filters. */
  @Bean
  @ConditionalOnMissingBean
  HeadroomGatewayFilterFactory headroomGatewayFilterFactory(HeadroomRoutes routes, PolicyCatalog catalog,
      QuotaLimiter limiter) {
    return new HeadroomGatewayFilterFactory(routes, catalog, limiter);
  }

  /** The discovery document at /.well-known/limits and /api/limits, whatever the routes. */
  @Bean
  DiscoveryWebFilter headroomDiscoveryWebFilter(HeadroomRoutes routes) {
    return new DiscoveryWebFilter(routes, new LinkedHashSet<>(Gate.DEFAULT_DISCOVERY_PATHS));
  }

  /** The gateway's own errors with Graceful Boundaries bodies ({@code headroom.cloud-gateway.error-bodies}). */
  @Bean
  @ConditionalOnProperty(prefix = "headroom.cloud-gateway", name = "error-bodies", matchIfMissing = true)
  GracefulErrorHandler headroomErrorHandler() {
    return new GracefulErrorHandler(Gate.DEFAULT_DISCOVERY_PATHS.get(0));
  }

  static boolean refuseOnStoreFailure(CloudGatewayProperties props) {
    return PolicyCatalog.refuseOnStoreFailure(props);
  }

  /**
   * The application's {@code MeterRegistry} for both front ends, when micrometer-core is on the class
   * path (it is optional: a Spring Cloud Gateway application need not have it) and the application
   * has exactly one registry (Spring Boot's actuator makes it).
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
  static class MeterConfiguration {

    @Bean
    CloudGatewayMeters headroomCloudGatewayMeters(ObjectProvider<MeterRegistry> registry) {
      return new CloudGatewayMeters() {
        @Override
        public void bind(GateBuilder<ServerWebExchange> gate) {
          MeterRegistry r = registry.getIfUnique();
          if (r != null) {
            gate.meterRegistry(r);
          }
        }

        @Override
        public DecisionMeters decisions() {
          MeterRegistry r = registry.getIfUnique();
          return r == null ? null : DecisionMeters.of(r);
        }
      };
    }
  }

  /**
   * The Redis store ({@code headroom.cloud-gateway.store.type: redis}), when headroom-redis is on
   * the classpath: one Lua round trip per decision, answered on Lettuce's I/O thread (never a
   * blocked event loop), Redis time; with {@code store.redis-event-loops: server}, the default, that
   * thread is one of the server's own loops ({@link RedisOnServerLoops}), with {@code own} one of
   * Lettuce's. With {@code on-failure: refuse} it
   * fails closed, so that a
   * Redis that cannot decide surfaces as a refusal; otherwise it fails open. Processed before the
   * outer class's store bean, which it therefore replaces.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "dev.headroom.redis.RedisStore")
  @ConditionalOnProperty(prefix = "headroom.cloud-gateway.store", name = "type", havingValue = "redis")
  static class RedisStoreConfiguration {

    /**
     * The server's event loops for the store ({@code store.redis-event-loops: server}, the default): those of
     * the application's {@code ReactorResourceFactory}, which Spring Boot's Reactor Netty server
     * runs on, or Reactor Netty's global ones ({@code HttpResources}) where there is none.
     */
    @Bean
    @ConditionalOnProperty(prefix = "headroom.cloud-gateway.store", name = "redis-event-loops", havingValue = "server",
        matchIfMissing = true)
    ServerLoops headroomServerLoops(ObjectProvider<ReactorResourceFactory> factory) {
      ReactorResourceFactory f = factory.getIfUnique();
      LoopResources loops = f != null ? f.getLoopResources() : HttpResources.get();
      return new ServerLoops(loops.onServer(LoopResources.DEFAULT_NATIVE));
    }

    /** The store's Lettuce resources over those loops, ended before the loops are. */
    @Bean
    @ConditionalOnProperty(prefix = "headroom.cloud-gateway.store", name = "redis-event-loops", havingValue = "server",
        matchIfMissing = true)
    RedisOnServerLoops headroomRedisOnServerLoops(ServerLoops loops) {
      return new RedisOnServerLoops(loops);
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    Store headroomStore(CloudGatewayProperties props, ObjectProvider<RedisOnServerLoops> serverLoops) {
      RedisOnServerLoops loops = serverLoops.getIfUnique();
      RedisStore.Builder b = RedisStore.builder()
          .failurePolicy(refuseOnStoreFailure(props) ? FailurePolicy.FAIL_CLOSED
              : FailurePolicy.FAIL_OPEN);
      try {
        b.uri(props.getStore().getRedisUri());
      } catch (IllegalArgumentException ex) {
        throw new CloudGatewayConfigurationException("headroom.cloud-gateway.store.redis-uri",
            props.getStore().getRedisUri(), "a Redis URI such as redis://127.0.0.1:6379", ex);
      }
      try {
        b.keyPrefix(props.getStore().getKeyPrefix());
      } catch (IllegalArgumentException ex) {
        throw new CloudGatewayConfigurationException("headroom.cloud-gateway.store.key-prefix",
            props.getStore().getKeyPrefix(), ex.getMessage(), ex);
      }
      try {
        b.refusalMemory(props.getStore().getRefusalMemory());
      } catch (IllegalArgumentException | NullPointerException ex) {
        throw new CloudGatewayConfigurationException("headroom.cloud-gateway.store.refusal-memory",
            props.getStore().getRefusalMemory(), "a duration from 0 (every request to Redis) to 1h", ex);
      }
      try {
        b.decisionDeadline(props.getStore().getDecisionDeadline());
      } catch (IllegalArgumentException | NullPointerException ex) {
        throw new CloudGatewayConfigurationException("headroom.cloud-gateway.store.decision-deadline",
            props.getStore().getDecisionDeadline(), "a duration from 1ms to 1m", ex);
      }
      StoreSettings.ReplicaAcknowledgements acks = props.getStore().getReplicaAcknowledgements();
      acks.problem("headroom.cloud-gateway.store.replica-acknowledgements", RedisStore.MAX_ACKNOWLEDGING_REPLICAS,
          props.getStore().getDecisionDeadline()).ifPresent(p -> {
            throw new CloudGatewayConfigurationException(List.of(p), null);
          });
      if (acks.getReplicas() != null) {
        b.replicaAcknowledgements(acks.getReplicas(), acks.getTimeout());
      }
      if (loops == null) {
        return b.build();
      }
      RedisStore store = b.clientResources(loops.resources()).build();
      loops.closeFirst(store);
      return store;
    }
  }
}
