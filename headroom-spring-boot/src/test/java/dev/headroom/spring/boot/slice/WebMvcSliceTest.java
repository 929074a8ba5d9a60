package dev.headroom.spring.boot.slice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

import dev.headroom.ManualTicker;
import dev.headroom.Ticker;
import dev.headroom.enforcement.HeadroomMeters;
import dev.headroom.spring.boot.BootLine.WebMvcSlice;
import dev.headroom.spring.boot.test.AutoConfigureHeadroom;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.test.web.servlet.MockMvc;

/**
 * @AutoConfigureHeadroom puts the filter into a @WebMvcTest slice (BootLine.WebMvcSlice, the one of
 * the Boot line under test); a ManualTicker bean drives time.
 */
@WebMvcSlice(controllers = SliceApplication.ItemController.class, properties = {
    "headroom.service.name=Items",
    "headroom.policies.per-client.quota=2",
    "headroom.policies.per-client.window=1m",
    "headroom.policies.per-client.algorithm=fixed-window",
    "headroom.policies.per-client.partitioning=client-ip"})
@AutoConfigureHeadroom
class WebMvcSliceTest {

  @TestConfiguration
  static class Clock {
    @Bean
    ManualTicker ticker() {
      return ManualTicker.atFixedInstant();
    }

    @Bean
    MeterRegistry meterRegistry() {
      return new SimpleMeterRegistry();
    }
  }

  @Autowired MockMvc mvc;
  @Autowired ManualTicker ticker;
  @Autowired Ticker headroomTicker;
  @Autowired MeterRegistry registry;

  @Test
  void annotatedHandlerIsLimitedAndRefusalsCarryHeadersAndBody() throws Exception {
    assertThat(headroomTicker).isSameAs(ticker);
    mvc.perform(get("/api/items/1")).andExpect(status().isOk())
        .andExpect(header().string("RateLimit-Policy", "\"per-client\";q=2;w=60"))
        .andExpect(header().string("RateLimit", "\"per-client\";r=1;t=60"));
    mvc.perform(get("/api/items/2")).andExpect(status().isOk());
    mvc.perform(get("/api/items/3")).andExpect(status().isTooManyRequests())
        .andExpect(header().string("Retry-After", "60"))
        .andExpect(header().string("Content-Type", containsString("application/problem+json")))
        .andExpect(jsonPath("$.retryAfterSeconds").value(60))
        .andExpect(jsonPath("$['violated-policies'][0]").value("per-client"));
    mvc.perform(get("/api/health")).andExpect(status().isOk()).andExpect(header().doesNotExist("RateLimit"));
    ticker.advance(Duration.ofSeconds(60));
    mvc.perform(get("/api/items/4")).andExpect(status().isOk());

    assertThat(registry.get(HeadroomMeters.DECISIONS).tag("policy", "per-client").tag("outcome", "allowed")
        .tag("problem", "none").counter().count()).isEqualTo(3);
    assertThat(registry.get(HeadroomMeters.DECISIONS).tag("policy", "per-client").tag("outcome", "refused")
        .tag("problem", "quota-exceeded").counter().count()).isEqualTo(1);
  }

  @Test
  void discoveryListsTheAnnotatedEndpoint() throws Exception {
    mvc.perform(get("/.well-known/limits")).andExpect(status().isOk())
        .andExpect(jsonPath("$.service").value("Items"))
        .andExpect(jsonPath("$.limits.item.endpoint").value("/api/items/{id}"))
        .andExpect(jsonPath("$.limits.item.method").value("GET"))
        .andExpect(jsonPath("$.limits.item.limits[0].maxRequests").value(2))
        .andExpect(content().contentTypeCompatibleWith("application/json"));
  }
}
