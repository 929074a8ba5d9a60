package dev.headroom.spring.boot;

import dev.headroom.InMemoryStore;
import dev.headroom.QuotaLimiter;
import dev.headroom.Store;
import dev.headroom.Ticker;
import dev.headroom.enforcement.settings.StoreSettings;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.redis.RedisStore;
import dev.headroom.spring.boot.HeadroomAutoConfiguration.HeadroomPolicies;
import java.util.List;
import java.util.Locale;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * The beans every Headroom front end of a Spring Boot application uses, servlet or reactive, from
 * {@code headroom.*}: the clock, the validated policies, the store (in-memory, Redis, or the
 * application's own), the limiter and the refusal texts. Imported by
 * {@link HeadroomAutoConfiguration} and {@link HeadroomReactiveAutoConfiguration}.
 */
@Configuration(proxyBeanMethods = false)
@Import({HeadroomObservabilityConfiguration.class, HeadroomHealthConfiguration.class})
class HeadroomCommonConfiguration {

  @Bean
  @ConditionalOnMissingBean
  Ticker headroomTicker() {
    return Ticker.system();
  }

  @Bean
  HeadroomPolicies headroomPolicies(HeadroomProperties props, HeadroomPlanProperties plans) {
    return new HeadroomPolicies(HeadroomSettings.read(props, plans));
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
  LimitRefusals headroomRefusals(Ticker ticker, HeadroomPolicies policies) {
    return policies.settings().refusals(ticker);
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
      RedisStore.Builder b = RedisStore.builder();
      try {
        b.refusalMemory(props.getStore().getRefusalMemory());
      } catch (IllegalArgumentException | NullPointerException ex) {
        throw new HeadroomConfigurationException("headroom.store.refusal-memory", props.getStore().getRefusalMemory(),
            "a duration from 0 (every request to Redis) to 1h", ex);
      }
      try {
        b.decisionDeadline(props.getStore().getDecisionDeadline());
      } catch (IllegalArgumentException | NullPointerException ex) {
        throw new HeadroomConfigurationException("headroom.store.decision-deadline",
            props.getStore().getDecisionDeadline(), "a duration from 1ms to 1m", ex);
      }
      StoreSettings.ReplicaAcknowledgements acks = props.getStore().getReplicaAcknowledgements();
      acks.problem("headroom.store.replica-acknowledgements", RedisStore.MAX_ACKNOWLEDGING_REPLICAS,
          props.getStore().getDecisionDeadline()).ifPresent(p -> {
            throw new HeadroomConfigurationException(List.of(p), null);
          });
      if (acks.getReplicas() != null) {
        b.replicaAcknowledgements(acks.getReplicas(), acks.getTimeout());
      }
      try {
        return b.uri(props.getStore().getRedisUri()).build();
      } catch (IllegalArgumentException ex) {
        throw new HeadroomConfigurationException("headroom.store.redis-uri", props.getStore().getRedisUri(),
            "a Redis URI such as redis://127.0.0.1:6379", ex);
      }
    }
  }

}
