package dev.headroom.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The filter's opt-in error bodies ({@link HeadroomFilter.Builder#errorBodies}) in embedded Tomcat:
 * the application's {@code sendError} (404, 405 with its Allow) and an exception it lets through
 * (500) are answered with Graceful Boundaries bodies (section 6), on limited and unlimited paths.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ErrorBodiesTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private EmbeddedTomcat tomcat;
  private URI base;
  private final HttpClient client = HttpClient.newHttpClient();

  @BeforeAll
  void start() throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    HeadroomFilter filter = HeadroomFilter.builder()
        .limiter(QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build()))
        .refusals(LimitRefusals.builder().ticker(ticker).defaults(PolicyTexts.builder("Limits keep the service fair.").build())
            .build())
        .route(Route.builder("/limited/**").policy(QuotaPolicy.builder("p").quota(100).window(Duration.ofMinutes(1)).build())
            .build())
        .discovery("Errors", "A service whose errors say what happened.")
        .errorBodies(true)
        .build();
    tomcat = EmbeddedTomcat.start(new HttpServlet() {
      private static final long serialVersionUID = 1L;

      @Override
      protected void service(HttpServletRequest req, HttpServletResponse res) throws IOException {
        String path = req.getRequestURI();
        if (path.endsWith("/boom")) {
          throw new IllegalStateException("the application failed");
        }
        if (path.endsWith("/get-only") && !req.getMethod().equals("GET")) {
          res.setHeader("Allow", "GET, HEAD");
          res.sendError(405, "internal message that is not for callers");
          return;
        }
        if (path.endsWith("/get-only")) {
          res.getWriter().write("ok");
          return;
        }
        res.sendError(404);
      }
    }, filter);
    base = tomcat.base();
  }

  @AfterAll
  void stop() throws Exception {
    tomcat.close();
  }

  private HttpResponse<String> send(String method, String path) throws Exception {
    return client.send(HttpRequest.newBuilder(base.resolve(path)).method(method, HttpRequest.BodyPublishers.noBody())
        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void notFoundOnAnUnlimitedPathHasErrorDetailAndWhy_gb_section6() throws Exception {
    HttpResponse<String> r = send("GET", "/nothing");
    assertThat(r.statusCode()).isEqualTo(404);
    assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("application/problem+json");
    JsonNode b = JSON.readTree(r.body());
    assertThat(b.path("error").asText()).isEqualTo("not_found");
    assertThat(b.path("detail").asText()).contains("GET /nothing");
    assertThat(b.path("why").asText()).contains("/.well-known/limits");
  }

  @Test
  void methodNotAllowedNamesTheAllowedMethodsAndKeepsTheApplicationsMessageOut_gb_section6() throws Exception {
    HttpResponse<String> r = send("DELETE", "/limited/get-only");
    assertThat(r.statusCode()).isEqualTo(405);
    assertThat(r.headers().firstValue("Allow")).hasValue("GET, HEAD");
    assertThat(r.headers().firstValue("RateLimit").orElse("")).startsWith("\"p\";r=99;t=");
    JsonNode b = JSON.readTree(r.body());
    assertThat(b.path("error").asText()).isEqualTo("method_not_allowed");
    assertThat(b.path("allowedMethods").toString()).isEqualTo("[\"GET\",\"HEAD\"]");
    assertThat(r.body()).doesNotContain("internal message");
  }

  @Test
  void anExceptionTheApplicationLetsThroughIs500WithABody_gb_section6() throws Exception {
    HttpResponse<String> r = send("GET", "/boom");
    assertThat(r.statusCode()).isEqualTo(500);
    JsonNode b = JSON.readTree(r.body());
    assertThat(b.path("error").asText()).isEqualTo("internal_error");
    assertThat(b.path("why").asText()).isNotBlank();
    assertThat(r.body()).doesNotContain("the application failed").doesNotContain("IllegalStateException");
  }
}
