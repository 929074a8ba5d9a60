package dev.headroom.spring.boot.adaptive;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.spring.boot.HeadroomAutoConfiguration;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code headroom.routes[i].adaptive.*} in a started application, over its real port: the route's
 * learnt limit is advertised as the {@code adaptive} concurrent-requests policy, a request beyond
 * it while the others are in flight is refused 503 {@code temporary-reduced-capacity} with
 * Retry-After (draft-ietf-httpapi-ratelimit-headers-09 section 5.2), and a value that is not valid
 * stops startup naming the property. The same gate and settings model as the gateway's
 * {@code routes[].adaptive}, whose learning is tested there and in headroom-enforcement.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AdaptiveBootTest {
  /** Released by the test: the handler holds each request in flight until then. */
  static volatile CountDownLatch release = new CountDownLatch(0);
  /** One permit per request the handler has started. */
  static final Semaphore started = new Semaphore(0);

  @SpringBootApplication
  static class AdaptiveApplication {
    @RestController
    static class Api {
      @GetMapping("/work")
      String work() throws InterruptedException {
        started.release();
        release.await(30, TimeUnit.SECONDS);
        return "done";
      }
    }
  }

  private final HttpClient client = HttpClient.newHttpClient();
  private ConfigurableApplicationContext app;
  private int port;

  @BeforeAll
  void start() {
    app = new SpringApplicationBuilder(AdaptiveApplication.class).properties(Map.ofEntries(
        Map.entry("server.port", "0"), Map.entry("server.address", "127.0.0.1"), Map.entry("spring.main.banner-mode", "off"),
        Map.entry("headroom.service.name", "Adaptive"),
        Map.entry("headroom.why", "Limits keep the service responsive for every caller."),
        Map.entry("headroom.routes[0].path", "/work"),
        Map.entry("headroom.routes[0].adaptive.initial-limit", "2"),
        Map.entry("headroom.routes[0].adaptive.max-limit", "4"))).run();
    port = app.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
  }

  @AfterAll
  void stop() {
    release.countDown();
    app.close();
  }

  private CompletableFuture<HttpResponse<String>> get() {
    return client.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/work"))
        .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void aRequestBeyondTheLearntLimitIsRefused503() throws Exception {
    release = new CountDownLatch(1);
    CompletableFuture<HttpResponse<String>> first = get();
    CompletableFuture<HttpResponse<String>> second = get();
    assertThat(started.tryAcquire(2, 30, TimeUnit.SECONDS)).as("both requests in flight").isTrue();
    HttpResponse<String> refused = get().get(30, TimeUnit.SECONDS);
    assertThat(refused.statusCode()).isEqualTo(503);
    assertThat(refused.body()).contains("temporary-reduced-capacity");
    assertThat(Long.parseLong(refused.headers().firstValue("Retry-After").orElseThrow())).isGreaterThanOrEqualTo(1);
    assertThat(refused.headers().firstValue("RateLimit-Policy").orElseThrow())
        .contains("\"adaptive\";q=2;qu=\"concurrent-requests\"");

    release.countDown();
    assertThat(first.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    HttpResponse<String> done = second.get(30, TimeUnit.SECONDS);
    assertThat(done.statusCode()).isEqualTo(200);
    assertThat(done.headers().firstValue("RateLimit-Policy").orElseThrow()).contains("\"adaptive\";q=2;");
    assertThat(get().get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
  }

  @Test
  void aValueThatIsNotValidStopsStartupNamingTheProperty() {
    new WebApplicationContextRunner().withConfiguration(AutoConfigurations.of(HeadroomAutoConfiguration.class))
        .withPropertyValues("headroom.routes[0].path=/work", "headroom.routes[0].adaptive.min-limit=0")
        .run(ctx -> assertThat(ctx.getStartupFailure()).hasStackTraceContaining("headroom.routes[0].adaptive.min-limit")
            .hasStackTraceContaining("at least 1"));
  }
}
