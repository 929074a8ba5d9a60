package dev.headroom.spring.cloud.gateway;

import dev.headroom.Store;
import dev.headroom.StoreHealth;
import dev.headroom.enforcement.ReadinessGroups;
import java.util.Locale;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The {@code headroom} health contributor of a Spring Cloud Gateway application with Spring Boot's
 * actuator: the state of Headroom's store ({@link StoreHealth}, read as the Spring Boot starter
 * reads it): {@code UP}; {@code DEGRADED} while Redis is gone and requests are admitted (not in
 * Spring Boot's default status order: it lowers no aggregate status and maps to HTTP 200);
 * {@code DOWN} while a fail-closed Redis store ({@code headroom.cloud-gateway.store.on-failure:
 * refuse}) cannot decide. A fail-closed store also joins Spring Boot's {@code readiness} group
 * ({@link ReadinessGroups}), so that an instance that refuses every limited request while Redis is
 * gone is not ready. {@code management.health.headroom.enabled: false} leaves it out.
 *
 * <p>Spring Boot 3 (Spring Cloud Gateway 4.3) and 4 (Spring Cloud Gateway 5) have their health API
 * in different packages: each line has its own nested configuration, guarded by the name of its
 * {@code HealthIndicator}, and the other line's classes are never loaded. A blocking
 * {@code HealthIndicator}: the reading sends nothing to Redis.
 */
@AutoConfiguration(after = HeadroomCloudGatewayAutoConfiguration.class, afterName = {
    "org.springframework.boot.actuate.autoconfigure.availability.AvailabilityProbesAutoConfiguration", // Boot 3
    "org.springframework.boot.health.autoconfigure.actuate.endpoint.AvailabilityProbesAutoConfiguration"}) // Boot 4
@ConditionalOnProperty(prefix = "management.health.headroom", name = "enabled", matchIfMissing = true)
@ConditionalOnBean({Store.class, CloudGatewayProperties.class})
public class HeadroomCloudGatewayHealthAutoConfiguration {

  /** The bean name, which makes the contributor's name {@code headroom}. */
  static final String BEAN = "headroomHealthIndicator";

  /** The name of the contributor. */
  static final String CONTRIBUTOR = "headroom";

  /** The store's state now, with the configured Redis URI (without its credentials) for the configured Redis store. */
  static StoreHealth read(Store store, CloudGatewayProperties props) {
    String type = props.getStore().getType() == null ? "" : props.getStore().getType().toLowerCase(Locale.ROOT);
    return StoreHealth.of(store, PolicyCatalog.refuseOnStoreFailure(props))
        .withUri(type.equals("redis") ? props.getStore().getRedisUri() : null);
  }

  /** Spring Boot 3, whose health API is in spring-boot-actuator. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.boot.actuate.health.HealthIndicator")
  static class Boot3Health {

    @Bean(BEAN)
    @ConditionalOnMissingBean(name = BEAN)
    org.springframework.boot.actuate.health.HealthIndicator headroomHealthIndicator(
        Store store, CloudGatewayProperties props) {
      return () -> {
        StoreHealth h = read(store, props);
        return org.springframework.boot.actuate.health.Health
            .status(new org.springframework.boot.actuate.health.Status(h.status().name())).withDetails(h.details()).build();
      };
    }

    @Bean
    org.springframework.boot.actuate.health.HealthEndpointGroupsPostProcessor headroomReadinessGroup(
        Store store, CloudGatewayProperties props) {
      return groups -> read(store, props).failsClosed() ? ReadinessGroups.withReadinessMember(
          org.springframework.boot.actuate.health.HealthEndpointGroups.class,
          org.springframework.boot.actuate.health.HealthEndpointGroup.class, groups, CONTRIBUTOR) : groups;
    }
  }

  /** Spring Boot 4, whose health API is in spring-boot-health. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
  static class Boot4Health {

    @Bean(BEAN)
    @ConditionalOnMissingBean(name = BEAN)
    org.springframework.boot.health.contributor.HealthIndicator headroomHealthIndicator(
        Store store, CloudGatewayProperties props) {
      return () -> {
        StoreHealth h = read(store, props);
        return org.springframework.boot.health.contributor.Health
            .status(new org.springframework.boot.health.contributor.Status(h.status().name())).withDetails(h.details()).build();
      };
    }

    @Bean
    org.springframework.boot.health.actuate.endpoint.HealthEndpointGroupsPostProcessor headroomReadinessGroup(
        Store store, CloudGatewayProperties props) {
      return groups -> read(store, props).failsClosed() ? ReadinessGroups.withReadinessMember(
          org.springframework.boot.health.actuate.endpoint.HealthEndpointGroups.class,
          org.springframework.boot.health.actuate.endpoint.HealthEndpointGroup.class, groups, CONTRIBUTOR) : groups;
    }
  }
}
