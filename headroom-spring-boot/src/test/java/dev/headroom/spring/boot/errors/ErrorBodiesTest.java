package dev.headroom.spring.boot.errors;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The starter answers the errors Spring sends itself with Graceful Boundaries bodies (section 6),
 * over a real port: the error page (404, 405 with allowedMethods, the 500 of an uncaught exception,
 * 415) through {@code HeadroomErrorController}, and Spring MVC's own {@link ProblemDetail}s (with
 * {@code spring.mvc.problemdetails.enabled}) completed by {@code HeadroomProblemDetails}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ErrorBodiesTest {

  @SpringBootApplication
  static class ErrorApplication {
    @RestController
    static class Endpoints {
      @GetMapping("/boom")
      String boom() {
        throw new IllegalStateException("secret internal failure");
      }

      @PostMapping(value = "/orders", consumes = "application/json")
      Map<String, Object> order(@RequestBody Map<String, Object> body) {
        return body;
      }

      @GetMapping("/problem")
      ProblemDetail problem() {
        return ProblemDetail.forStatus(HttpStatus.CONFLICT);
      }
    }
  }

  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient client = HttpClient.newHttpClient();
  private ConfigurableApplicationContext plain;
  private ConfigurableApplicationContext problems;

  @BeforeAll
  void start() {
    plain = run(false);
    problems = run(true);
  }

  private static ConfigurableApplicationContext run(boolean problemDetails) {
    return new SpringApplicationBuilder(ErrorApplication.class).properties(Map.of(
        "server.port", "0", "server.address", "127.0.0.1", "spring.main.banner-mode", "off",
        "headroom.service.name", "Errors", "headroom.why", "Limits keep the service responsive for every caller.",
        "spring.mvc.problemdetails.enabled", Boolean.toString(problemDetails))).run();
  }

  @AfterAll
  void stop() {
    plain.close();
    problems.close();
  }

  private HttpResponse<String> send(ConfigurableApplicationContext ctx, String method, String path, String contentType)
      throws Exception {
    int port = ctx.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(10))
        .method(method, contentType == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString("x"));
    if (contentType != null) {
      b.header("Content-Type", contentType);
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static JsonNode assertGracefulBoundaries(HttpResponse<String> r, int status, String error) throws Exception {
    assertThat(r.statusCode()).isEqualTo(status);
    assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("application/");
    JsonNode b = JSON.readTree(r.body());
    assertThat(b.path("error").asText()).as(r.body()).isEqualTo(error);
    assertThat(b.path("detail").asText()).as(r.body()).isNotBlank();
    assertThat(b.path("why").asText()).as(r.body()).isNotBlank();
    return b;
  }

  @Test
  void aPathNoHandlerServesIs404WithErrorDetailAndWhy() throws Exception {
    for (ConfigurableApplicationContext ctx : new ConfigurableApplicationContext[] {plain, problems}) {
      JsonNode b = assertGracefulBoundaries(send(ctx, "GET", "/nowhere", null), 404, "not_found");
      assertThat(b.path("detail").asText()).contains("nowhere"); // Spring's own detail is kept where it wrote one
    }
  }

  @Test
  void aMethodTheHandlerDoesNotTakeIs405WithAllowedMethods() throws Exception {
    for (ConfigurableApplicationContext ctx : new ConfigurableApplicationContext[] {plain, problems}) {
      HttpResponse<String> r = send(ctx, "DELETE", "/orders", null);
      JsonNode b = assertGracefulBoundaries(r, 405, "method_not_allowed");
      assertThat(b.path("allowedMethods").toString()).contains("POST");
    }
  }

  @Test
  void anUnsupportedMediaTypeIs415WithErrorDetailAndWhy() throws Exception {
    for (ConfigurableApplicationContext ctx : new ConfigurableApplicationContext[] {plain, problems}) {
      assertGracefulBoundaries(send(ctx, "POST", "/orders", "text/plain"), 415, "unsupported_media_type");
    }
  }

  @Test
  void anUncaughtExceptionIs500WithoutItsMessage() throws Exception {
    HttpResponse<String> r = send(plain, "GET", "/boom", null);
    assertGracefulBoundaries(r, 500, "internal_error");
    assertThat(r.body()).doesNotContain("secret internal failure").doesNotContain("IllegalStateException");
  }

  @Test
  void aProblemDetailOfTheApplicationGainsErrorAndWhy() throws Exception {
    JsonNode b = assertGracefulBoundaries(send(plain, "GET", "/problem", null), 409, "conflict");
    assertThat(b.path("status").asInt()).isEqualTo(409);
  }
}
