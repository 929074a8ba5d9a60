package dev.headroom.spring.boot.adaptive;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.enforcement.plan.PlanResolution;
import dev.headroom.enforcement.plan.PlanResolver;
import dev.headroom.spring.boot.HeadroomAutoConfiguration;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
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
import org.springframework.context.annotation.Bean;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code headroom.routes[i].adaptive.shares.*} in a started application, over its real port, with
 * plans ({@code headroom.plans.*}) and a resolver bean that reads the plan from {@code X-Plan}: the
 * route's learnt limit is 4, free's share 0.25 and pro's 0.75; free alone holds all 4 while pro is
 * idle, pro still gets its 3, and both are then refused 503 {@code temporary-reduced-capacity}
 * (draft-ietf-httpapi-ratelimit-headers-09 section 5.2). A share naming no plan stops startup
 * naming the property. The same settings model and gate as the gateway's
 * {@code routes[].adaptive.shares}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AdaptiveSharesBootTest {
  /** Per plan: released by the test to let the plan's held requests complete. */
  static final Map<String, CountDownLatch> RELEASE = new ConcurrentHashMap<>();
  /** One permit per request the handler has started. */
  static final Semaphore STARTED = new Semaphore(0);

  @SpringBootApplication
  static class SharesApplication {
    @Bean
    PlanResolver planResolver() {
      return view -> CompletableFuture.completedFuture(view.headers("X-Plan").isEmpty() ? PlanResolution.anonymous()
          : new PlanResolution.Named(view.headers("X-Plan").get(0)));
    }

    @RestController
    static class Api {
      @GetMapping("/work")
      String work(@RequestParam String plan) throws InterruptedException {
        STARTED.release();
        RELEASE.get(plan).await(30, TimeUnit.SECONDS);
        return "done";
      }
    }
  }

  private final HttpClient client = HttpClient.newHttpClient();
  private ConfigurableApplicationContext app;
  private int port;

  @BeforeAll
  void start() {
    RELEASE.put("free", new CountDownLatch(1));
    RELEASE.put("pro", new CountDownLatch(1));
    app = new SpringApplicationBuilder(SharesApplication.class).properties(Map.ofEntries(
        Map.entry("server.port", "0"), Map.entry("server.address", "127.0.0.1"), Map.entry("spring.main.banner-mode", "off"),
        Map.entry("headroom.service.name", "Shares"),
        Map.entry("headroom.why", "Limits keep the service responsive for every caller."),
        Map.entry("headroom.plans.fallback", "free"),
        Map.entry("headroom.plans.catalog.free.url", "/pricing#free"),
        Map.entry("headroom.plans.catalog.pro.url", "/pricing#pro"),
        Map.entry("headroom.routes[0].path", "/work"),
        Map.entry("headroom.routes[0].adaptive.initial-limit", "4"),
        Map.entry("headroom.routes[0].adaptive.max-limit", "4"),
        Map.entry("headroom.routes[0].adaptive.shares.free", "0.25"),
        Map.entry("headroom.routes[0].adaptive.shares.pro", "0.75"))).run();
    port = app.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
  }

  @AfterAll
  void stop() {
    RELEASE.values().forEach(CountDownLatch::countDown);
    app.close();
  }

  private HttpRequest request(String plan) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/work?plan=" + plan)).header("X-Plan", plan)
        .timeout(Duration.ofSeconds(30)).build();
  }

  private List<CompletableFuture<HttpResponse<String>>> hold(String plan, int n) throws InterruptedException {
    List<CompletableFuture<HttpResponse<String>>> held = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      held.add(client.sendAsync(request(plan), HttpResponse.BodyHandlers.ofString()));
    }
    assertThat(STARTED.tryAcquire(n, 30, TimeUnit.SECONDS)).as("%s %s requests in flight", n, plan).isTrue();
    return held;
  }

  private void assertRefused(String plan) throws Exception {
    HttpResponse<String> r = client.send(request(plan), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as("%s refused", plan).isEqualTo(503);
    assertThat(r.body()).contains("temporary-reduced-capacity");
    assertThat(r.headers().firstValue("Retry-After")).isPresent();
  }

  @Test
  void eachPlanKeepsItsShareAndBorrowsWhatIsIdle() throws Exception {
    List<CompletableFuture<HttpResponse<String>>> free = hold("free", 4);
    assertRefused("free");
    List<CompletableFuture<HttpResponse<String>>> pro = hold("pro", 3);
    assertRefused("pro");
    assertRefused("free");
    assertThat(STARTED.availablePermits()).as("no request beyond the shares reached the handler").isZero();
    RELEASE.values().forEach(CountDownLatch::countDown);
    for (CompletableFuture<HttpResponse<String>> f : free) {
      assertThat(f.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    }
    for (CompletableFuture<HttpResponse<String>> f : pro) {
      assertThat(f.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    }
  }

  @Test
  void aShareOfNoPlanStopsStartupNamingTheProperty() {
    new WebApplicationContextRunner().withConfiguration(AutoConfigurations.of(HeadroomAutoConfiguration.class))
        .withPropertyValues("headroom.plans.fallback=free", "headroom.plans.catalog.free.url=/pricing#free",
            "headroom.routes[0].path=/work", "headroom.routes[0].adaptive.shares.gold=0.5")
        .run(ctx -> assertThat(ctx.getStartupFailure())
            .hasStackTraceContaining("headroom.routes[0].adaptive.shares.gold: expected one of the plans [free], got 'gold'"));
  }
}
