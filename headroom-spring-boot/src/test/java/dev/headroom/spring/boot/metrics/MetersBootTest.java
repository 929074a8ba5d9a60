package dev.headroom.spring.boot.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.enforcement.HeadroomMeters;
import io.micrometer.common.KeyValue;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * The starter gives the application's MeterRegistry and ObservationRegistry beans to the gate, in a
 * servlet application (Tomcat) and in a reactive one (Reactor Netty) alike: after 3 allowed and 2
 * refused requests over HTTP, the same meters (headroom-enforcement HeadroomMeters) count them by
 * policy, outcome and problem, and each decision is one observation.
 */
class MetersBootTest {

  static final Duration TIMEOUT = Duration.ofSeconds(30);
  static final String[] PROPERTIES = {"server.port=0", "server.address=127.0.0.1", "spring.main.banner-mode=off",
      "headroom.policies.items.quota=3", "headroom.policies.items.window=60s",
      "headroom.policies.items.algorithm=fixed-window",
      "headroom.routes[0].path=/api/items/{id}", "headroom.routes[0].policies[0]=items"};

  /** The registries, as the application defines them (Spring Boot's actuator would make its own otherwise). */
  static class Registries {
    @Bean
    MeterRegistry meterRegistry() {
      return new SimpleMeterRegistry();
    }

    @Bean
    TestObservationRegistry observationRegistry() {
      return TestObservationRegistry.create();
    }
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class ServletApp extends Registries {
    @Bean
    org.springframework.web.servlet.function.RouterFunction<org.springframework.web.servlet.function.ServerResponse> items() {
      return org.springframework.web.servlet.function.RouterFunctions.route()
          .GET("/api/items/{id}", r -> org.springframework.web.servlet.function.ServerResponse.ok().body("item")).build();
    }
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class ReactiveApp extends Registries {
    @Bean
    org.springframework.web.reactive.function.server.RouterFunction<org.springframework.web.reactive.function.server.ServerResponse> items() {
      return org.springframework.web.reactive.function.server.RouterFunctions.route()
          .GET("/api/items/{id}", r -> org.springframework.web.reactive.function.server.ServerResponse.ok().bodyValue("item"))
          .build();
    }
  }

  @Test
  void aServletApplicationsGateRecordsIntoTheApplicationsRegistries() throws Exception {
    trafficIsMeteredAndObserved(ServletApp.class, WebApplicationType.SERVLET);
  }

  @Test
  void aReactiveApplicationsGateRecordsIntoTheApplicationsRegistries() throws Exception {
    trafficIsMeteredAndObserved(ReactiveApp.class, WebApplicationType.REACTIVE);
  }

  private static void trafficIsMeteredAndObserved(Class<?> app, WebApplicationType type) throws Exception {
    try (ConfigurableApplicationContext context = new SpringApplicationBuilder(app).web(type).properties(PROPERTIES).run()) {
      int port = context.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
      HttpClient client = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
      for (int i = 0; i < 5; i++) {
        HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/items/" + i))
            .timeout(TIMEOUT).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(i < 3 ? 200 : 429);
      }
      MeterRegistry meters = context.getBean(MeterRegistry.class);
      assertThat(meters.get(HeadroomMeters.DECISIONS).tag(HeadroomMeters.POLICY, "items")
          .tag(HeadroomMeters.OUTCOME, "allowed").tag(HeadroomMeters.PROBLEM, "none").counter().count()).isEqualTo(3);
      assertThat(meters.get(HeadroomMeters.DECISIONS).tag(HeadroomMeters.POLICY, "items")
          .tag(HeadroomMeters.OUTCOME, "refused").tag(HeadroomMeters.PROBLEM, "quota-exceeded").counter().count())
          .isEqualTo(2);
      assertThat(meters.get(HeadroomMeters.STORE_LATENCY).timer().count()).isEqualTo(5);
      TestObservationRegistryAssert.assertThat(context.getBean(TestObservationRegistry.class))
          .hasNumberOfObservationsWithNameEqualTo(HeadroomMeters.OBSERVATION, 5)
          .hasHandledContextsThatSatisfy(contexts -> {
            var decisions = contexts.stream().filter(c -> HeadroomMeters.OBSERVATION.equals(c.getName())).toList();
            assertThat(decisions.stream().filter(c -> has(c, HeadroomMeters.OUTCOME, "allowed"))).hasSize(3);
            assertThat(decisions.stream().filter(c -> has(c, HeadroomMeters.OUTCOME, "refused")
                && has(c, HeadroomMeters.PROBLEM, "quota-exceeded"))).hasSize(2);
            assertThat(decisions).allMatch(c -> has(c, HeadroomMeters.ROUTE, "/api/items/{id}"));
          });
    }
  }

  private static boolean has(Observation.Context c, String key, String value) {
    KeyValue kv = c.getLowCardinalityKeyValue(key);
    return kv != null && kv.getValue().equals(value);
  }
}
