package dev.headroom.spring.boot;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The application's Micrometer registries given to every Headroom gate, servlet or reactive
 * (headroom-enforcement {@code GateBuilder.meterRegistry} and {@code observationRegistry}): the
 * gate then records the meters every Headroom front end records, under the same names and tags
 * ({@code HeadroomMeters}: {@code headroom.decisions}, {@code headroom.store.latency},
 * {@code headroom.store.failures}, {@code headroom.leases.active}), and each decision is a
 * {@code headroom.decision} observation, so a span where the application has a tracing bridge.
 * Each part applies only when its Micrometer module is on the class path and the application has
 * exactly one such registry bean (Spring Boot's actuator makes both). Imported by
 * {@link HeadroomCommonConfiguration}.
 */
@Configuration(proxyBeanMethods = false)
class HeadroomObservabilityConfiguration {

  /** The application's {@code MeterRegistry}, when it has one. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
  static class Meters {
    @Bean
    HeadroomGateCustomizer headroomMeterRegistry(ObjectProvider<MeterRegistry> registry) {
      return gate -> {
        MeterRegistry r = registry.getIfUnique();
        if (r != null) {
          gate.meterRegistry(r);
        }
      };
    }
  }

  /** The application's {@code ObservationRegistry}, when it has one. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "io.micrometer.observation.ObservationRegistry")
  static class Observations {
    @Bean
    HeadroomGateCustomizer headroomObservationRegistry(ObjectProvider<ObservationRegistry> registry) {
      return gate -> {
        ObservationRegistry r = registry.getIfUnique();
        if (r != null) {
          gate.observationRegistry(r);
        }
      };
    }
  }
}
