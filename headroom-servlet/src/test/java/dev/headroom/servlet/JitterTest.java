package dev.headroom.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.Algorithm;
import dev.headroom.InMemoryStore;
import dev.headroom.ManualTicker;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.PolicyTexts;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.SplittableRandom;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Jitter (draft-ietf-httpapi-ratelimit-headers-09 section 8.5) through the filter in embedded
 * Tomcat: refusals come back spread over the jitter, and each refusal says one moment everywhere:
 * Retry-After, the violated policy's {@code t} and the body's {@code retryAfterSeconds},
 * {@code windowResetAt} and detail (section 6).
 */
class JitterTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void refusalsAreSpreadAndTheBodyAgreesWithTheRetryAfterWritten_draft09_sections6_and8_5() throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    QuotaPolicy one = QuotaPolicy.builder("one").quota(1).window(Duration.ofSeconds(60)).algorithm(Algorithm.FIXED_WINDOW).build();
    HeadroomFilter filter = HeadroomFilter.builder()
        .limiter(QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build()))
        .refusals(LimitRefusals.builder().ticker(ticker).defaults(PolicyTexts.builder("Limits keep the service fair.").build()).build())
        .route(Route.builder("/a").policy(one).build())
        .jitter(Duration.ofSeconds(30), new SplittableRandom(7))
        .ticker(ticker)
        .build();
    EmbeddedTomcat tomcat = EmbeddedTomcat.start(new HttpServlet() {
      private static final long serialVersionUID = 1L;

      @Override
      protected void doGet(HttpServletRequest req, HttpServletResponse res) throws IOException {
        res.getWriter().write("ok");
      }
    }, filter);
    try {
      HttpClient client = HttpClient.newHttpClient();
      HttpRequest request = HttpRequest.newBuilder(URI.create(tomcat.base() + "/a"))
          .timeout(Duration.ofSeconds(10)).build();
      assertThat(client.send(request, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
      TreeSet<Long> seen = new TreeSet<>();
      for (int i = 0; i < 12; i++) {
        HttpResponse<String> r = client.send(request, HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(429);
        long retryAfter = Long.parseLong(r.headers().firstValue("Retry-After").orElseThrow());
        assertThat(retryAfter).isBetween(60L, 90L);
        assertThat(r.headers().firstValue("RateLimit")).hasValue("\"one\";r=0;t=" + retryAfter);
        JsonNode body = JSON.readTree(r.body());
        assertThat(body.path("retryAfterSeconds").asLong()).isEqualTo(retryAfter);
        assertThat(Instant.parse(body.path("windowResetAt").asText())).isEqualTo(ticker.instant().plusSeconds(retryAfter));
        assertThat(body.path("detail").asText()).endsWith("Try again in " + retryAfter + " seconds.");
        seen.add(retryAfter);
      }
      assertThat(seen).as("Retry-After values of 12 refusals with 30 s of jitter").hasSizeGreaterThan(3);
    } finally {
      tomcat.close();
    }
  }

  @Test
  void jitterIsValidatedNamingTheField() {
    assertThatThrownBy(() -> HeadroomFilter.builder().jitter(Duration.ofMillis(1500)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("jitter: expected a whole number of seconds")
        .hasMessageEndingWith("got PT1.5S");
    assertThatThrownBy(() -> HeadroomFilter.builder().onlyNearExhaustion(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("onlyNearExhaustion.threshold: expected");
  }
}
