package dev.headroom.spring.cloud.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;

/**
 * A Spring Cloud Gateway application without micrometer-core (optional here): the auto-configuration
 * still applies, with no meters, and both integrations are there.
 */
class WithoutMicrometerTest {

  @Test
  void withoutMicrometerCoreTheGatewayStartsWithoutMeters() {
    new ReactiveWebApplicationContextRunner()
        .withClassLoader(new FilteredClassLoader("io.micrometer.core"))
        .withUserConfiguration(GatewayApp.class)
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context).doesNotHaveBean(CloudGatewayMeters.class);
          assertThat(context).hasSingleBean(HeadroomRateLimiter.class);
          assertThat(context).hasSingleBean(HeadroomGatewayFilterFactory.class);
        });
  }

  @Test
  void withMicrometerCoreTheMetersAreConfigured() {
    new ReactiveWebApplicationContextRunner()
        .withUserConfiguration(GatewayApp.class, CloudGatewayMetersTest.Registry.class)
        .run(context -> assertThat(context).hasSingleBean(CloudGatewayMeters.class));
  }
}
