package dev.headroom.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.Algorithm;
import dev.headroom.ManualTicker;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.PolicyTexts;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Limits changed at run time apply to the next request and the discovery document, counters carrying on. */
class RuntimeLimitsTest {

  @Test
  void aChangedQuotaAppliesToTheNextRequest() throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    QuotaPolicy p = QuotaPolicy.builder("p").quota(1).window(Duration.ofMinutes(1))
        .algorithm(Algorithm.FIXED_WINDOW).build();
    HeadroomFilter filter = HeadroomFilter.builder().limiter(QuotaLimiter.inMemory())
        .refusals(LimitRefusals.builder().ticker(ticker).defaults(PolicyTexts.builder("Limits keep the service fair.").build()).build())
        .route(Route.builder("/a").policy(p).build()).discovery("Limits", "Runtime limits").ticker(ticker).build();
    try (TomcatWithFilter tomcat = new TomcatWithFilter(filter)) {
      assertThat(tomcat.get("/a", null, null).statusCode()).isEqualTo(200);
      assertThat(tomcat.get("/a", null, null).statusCode()).isEqualTo(429);
      filter.limits().set("p", 3, Optional.empty());
      // the one request counted so far still counts: two more
      assertThat(tomcat.get("/a", null, null).headers().firstValue("RateLimit").orElseThrow()).contains("r=1");
      assertThat(tomcat.get("/a", null, null).statusCode()).isEqualTo(200);
      assertThat(tomcat.get("/a", null, null).statusCode()).isEqualTo(429);
      assertThat(new ObjectMapper().readTree(tomcat.get("/.well-known/limits", null, null).body())
          .path("limits").elements().next().path("limits").get(0).path("maxRequests").asLong()).isEqualTo(3);
      filter.limits().reset("p");
      assertThat(filter.limits().current().get("p").quota()).isEqualTo(1);
    }
  }
}
