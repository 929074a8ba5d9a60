package dev.headroom.spring.cloud.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.headroom.enforcement.settings.SettingsProblem;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.BindException;

/**
 * {@code headroom.cloud-gateway.*} is a binding of headroom-http's settings model, read by the
 * converter Spring Boot's {@code headroom.*} is read by: every problem at startup at once, each
 * naming its property, its value and what was expected (Graceful Boundaries SC-6 for guidance).
 */
class CloudGatewaySettingsTest {

  @Test
  void everyBadPropertyIsReportedAtOnceEachNamingItsProperty() {
    Map<String, Object> p = new HashMap<>();
    p.put("headroom.cloud-gateway.service.origin", "https://api.example.com");
    p.put("headroom.cloud-gateway.policies.a.quota", "0");
    p.put("headroom.cloud-gateway.policies.a.unit", "bytes");
    p.put("headroom.cloud-gateway.policies.b.quota", "5");
    p.put("headroom.cloud-gateway.policies.b.alternative-endpoint", "https://elsewhere.example/items");
    p.put("headroom.cloud-gateway.policies.b.escalation-threshold", "0");
    p.put("headroom.cloud-gateway.headers.dialects", "draft-99");
    p.put("headroom.cloud-gateway.headers.only-near-exhaustion", "2");
    p.put("headroom.cloud-gateway.routes.items.policies", "b");
    p.put("headroom.cloud-gateway.routes.items.when[b]", "GE T");
    CloudGatewayConfigurationException cause = failure(p);
    assertThat(cause.problems()).extracting(SettingsProblem::path).containsExactly(
        "headroom.cloud-gateway.policies.a.quota", "headroom.cloud-gateway.policies.a.unit",
        "headroom.cloud-gateway.policies.b.alternative-endpoint", "headroom.cloud-gateway.policies.b.escalation-threshold",
        "headroom.cloud-gateway.headers.dialects[0]", "headroom.cloud-gateway.headers.only-near-exhaustion",
        "headroom.cloud-gateway.routes.items.when.b[0]");
    assertThat(cause.problems().get(1)).hasToString(
        "headroom.cloud-gateway.policies.a.unit: expected requests, content-bytes or concurrent-requests, got 'bytes'");
    assertThat(cause.problems().get(2).expected()).contains("SC-6");
    assertThat(cause.getMessage()).startsWith("7 problems\n  - headroom.cloud-gateway.policies.a.quota: ");
  }

  /** A policy's queue is in the shared settings model, but this binding does not wait: startup says so. */
  @Test
  void aQueueIsRefusedNotIgnored() {
    Map<String, Object> p = new HashMap<>();
    p.put("headroom.cloud-gateway.policies.b.quota", "5");
    p.put("headroom.cloud-gateway.policies.b.queue.max-wait", "500ms");
    p.put("headroom.cloud-gateway.routes.items.policies", "b");
    CloudGatewayConfigurationException cause = failure(p);
    assertThat(cause.problems()).extracting(SettingsProblem::path).containsExactly("headroom.cloud-gateway.policies.b.queue");
    assertThat(cause.problems().get(0).expected()).startsWith("no queue");
  }

  /** Where the store's connection runs is one of two words; another stops startup naming the property and the value. */
  @Test
  void anUnknownRedisEventLoopsValueStopsStartupNamingThePropertyAndTheValue() {
    Map<String, Object> p = new HashMap<>();
    p.put("headroom.cloud-gateway.store.redis-event-loops", "sideways");
    Throwable failure = catchThrowable(() -> GatewayApp.start(p).close());
    BindException bind = null;
    Throwable root = failure;
    for (Throwable c = failure; c != null; c = c.getCause()) {
      if (c instanceof BindException e) {
        bind = e;
      }
      root = c;
    }
    assertThat(bind).as("a binding failure in %s", failure).isNotNull();
    assertThat(bind).hasMessageContaining("headroom.cloud-gateway.store.redis-event-loops");
    assertThat(bind.getProperty().getName()).hasToString("headroom.cloud-gateway.store.redis-event-loops");
    assertThat(bind.getProperty().getValue()).isEqualTo("sideways");
    assertThat(root).hasMessageContaining("RedisEventLoops.sideways");
  }

  /** The configuration exception that stops an application started with {@code p}. */
  private static CloudGatewayConfigurationException failure(Map<String, Object> p) {
    Throwable failure = catchThrowable(() -> GatewayApp.start(p).close());
    CloudGatewayConfigurationException cause = null;
    for (Throwable c = failure; c != null; c = c.getCause()) {
      if (c instanceof CloudGatewayConfigurationException e) {
        cause = e;
      }
    }
    assertThat(cause).as("a CloudGatewayConfigurationException in %s", failure).isNotNull();
    return cause;
  }
}
