package dev.headroom.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

/**
 * The {@code headroom} actuator endpoint changes the filter's limits at run time: what it reads back
 * is what the filter enforces ({@code RuntimeLimits}, whose effect on requests headroom-servlet's
 * RuntimeLimitsTest shows over HTTP).
 */
class HeadroomEndpointTest {
  private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(HeadroomAutoConfiguration.class))
      .withPropertyValues("headroom.policies.api.quota=60", "headroom.policies.api.window=60s",
          "headroom.routes[0].path=/api/**", "headroom.routes[0].policies[0]=api",
          "management.endpoints.web.exposure.include=headroom");

  @Test
  void readsChangesAndRestoresALimit() {
    runner.run(ctx -> {
      assertThat(ctx).hasNotFailed().hasSingleBean(HeadroomEndpoint.class);
      HeadroomEndpoint endpoint = ctx.getBean(HeadroomEndpoint.class);
      assertThat(endpoint.limits().get("api")).containsEntry("quota", 60L).containsEntry("windowSeconds", 60L);
      assertThat(endpoint.set("api", 120, Duration.ofMinutes(2))).containsEntry("quota", 120L).containsEntry("windowSeconds", 120L);
      assertThat(ctx.getBean(HeadroomEndpoint.class).limits().get("api")).containsEntry("quota", 120L);
      assertThat(endpoint.reset("api")).containsEntry("quota", 60L);
      assertThatThrownBy(() -> endpoint.set("nope", 5, null)).isInstanceOf(HeadroomConfigurationException.class)
          .hasMessageContaining("headroom.policies.nope");
      assertThatThrownBy(() -> endpoint.set("api", 0, null)).hasMessageContaining("quota");
    });
  }
}
