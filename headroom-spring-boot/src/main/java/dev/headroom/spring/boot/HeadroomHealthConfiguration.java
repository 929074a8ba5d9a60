package dev.headroom.spring.boot;

import dev.headroom.Store;
import dev.headroom.StoreHealth;
import dev.headroom.enforcement.ReadinessGroups;
import java.util.Locale;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The {@code headroom} health contributor: the state of the store ({@link StoreHealth}: {@code UP};
 * {@code DEGRADED} while Redis is gone and the fallback decides or requests are admitted, which is
 * not in Spring Boot's default status order, so it lowers no aggregate status and maps to HTTP 200;
 * {@code DOWN} while a fail-closed Redis store cannot decide),
 * when the application has Spring Boot's actuator; {@code management.health.headroom.enabled: false}
 * leaves it out. Imported by {@link HeadroomCommonConfiguration}, so servlet and reactive
 * applications alike have it (a blocking {@code HealthIndicator}: the reading sends nothing to
 * Redis).
 *
 * <p>When the store fails closed (a Redis store with {@code headroom.store.on-failure: refuse}), the
 * contributor also joins Spring Boot's {@code readiness} group, where the application has one
 * ({@link ReadinessGroups}): an instance that refuses every limited request while Redis is gone
 * is then not ready.
 *
 * <p>One artifact serves Spring Boot 3 and 4, whose health API is in different packages (Boot 4
 * moved it to its spring-boot-health module): each line has its own nested configuration, guarded
 * by the name of its {@code HealthIndicator}, and the other line's classes are never loaded.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(prefix = "management.health.headroom", name = "enabled", matchIfMissing = true)
class HeadroomHealthConfiguration {

  /** The bean name, which makes the contributor's name {@code headroom}. */
  static final String BEAN = "headroomHealthIndicator";

  /** The store's state now, with the configured Redis URI (without its credentials) for the configured Redis store. */
  static StoreHealth read(Store store, HeadroomProperties props) {
    boolean refuses = "refuse".equalsIgnoreCase(props.getStore().getOnFailure());
    String type = props.getStore().getType() == null ? "" : props.getStore().getType().toLowerCase(Locale.ROOT);
    return StoreHealth.of(store, refuses).withUri(type.equals("redis") ? props.getStore().getRedisUri() : null);
  }

  /** Whether requests the store cannot decide are refused: the readiness group then includes the contributor. */
  static boolean failsClosed(Store store, HeadroomProperties props) {
    return read(store, props).failsClosed();
  }

  /** The name of the contributor ({@link #BEAN} without its suffix). */
  static final String CONTRIBUTOR = "headroom";

  /** Spring Boot 3, whose health API is in spring-boot-actuator. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = Boot3Health.HEALTH_INDICATOR)
  static class Boot3Health {
    static final String HEALTH_INDICATOR = "org.springframework.boot.actuate.health.HealthIndicator";

    @Bean(BEAN)
    @ConditionalOnMissingBean(name = BEAN)
    org.springframework.boot.actuate.health.HealthIndicator headroomHealthIndicator(
        Store store, HeadroomProperties props) {
      return () -> {
        StoreHealth h = read(store, props);
        return org.springframework.boot.actuate.health.Health
            .status(new org.springframework.boot.actuate.health.Status(h.status().name()))
            .withDetails(h.details()).build();
      };
    }

    @Bean
    org.springframework.boot.actuate.health.HealthEndpointGroupsPostProcessor headroomReadinessGroup(
        Store store, HeadroomProperties props) {
      return groups -> failsClosed(store, props) ? ReadinessGroups.withReadinessMember(
          org.springframework.boot.actuate.health.HealthEndpointGroups.class,
          org.springframework.boot.actuate.health.HealthEndpointGroup.class, groups, CONTRIBUTOR) : groups;
    }
  }

  /** Spring Boot 4, whose health API is in spring-boot-health. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = Boot4Health.HEALTH_INDICATOR)
  static class Boot4Health {
    static final String HEALTH_INDICATOR = "org.springframework.boot.health.contributor.HealthIndicator";

    @Bean(BEAN)
    @ConditionalOnMissingBean(name = BEAN)
    org.springframework.boot.health.contributor.HealthIndicator headroomHealthIndicator(
        Store store, HeadroomProperties props) {
      return () -> {
        StoreHealth h = read(store, props);
        return org.springframework.boot.health.contributor.Health
            .status(new org.springframework.boot.health.contributor.Status(h.status().name()))
            .withDetails(h.details()).build();
      };
    }

    @Bean
    org.springframework.boot.health.actuate.endpoint.HealthEndpointGroupsPostProcessor headroomReadinessGroup(
        Store store, HeadroomProperties props) {
      return groups -> failsClosed(store, props) ? ReadinessGroups.withReadinessMember(
          org.springframework.boot.health.actuate.endpoint.HealthEndpointGroups.class,
          org.springframework.boot.health.actuate.endpoint.HealthEndpointGroup.class, groups, CONTRIBUTOR) : groups;
    }
  }
}
