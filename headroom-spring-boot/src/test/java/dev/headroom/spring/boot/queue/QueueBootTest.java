package dev.headroom.spring.boot.queue;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.spring.boot.HeadroomAutoConfiguration;
import dev.headroom.spring.boot.HeadroomReactiveAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code headroom.policies.NAME.queue.max-wait} and {@code .max-queued} in started applications, over
 * their real ports, servlet (Tomcat: the request waits in asynchronous processing, no thread held)
 * and reactive (Reactor Netty): a burst against a 5-per-second policy with a queue is answered 200
 * throughout, paced over time, instead of 429; a full queue refuses at once with 429; a value that
 * is not valid stops startup naming the property, the value and what was expected. The same gate and
 * settings model as the gateway's {@code policies.NAME.queue}, whose ordering (first come first
 * served per partition) is tested in headroom-enforcement's WaitingGateTest.
 */
class QueueBootTest {

  @SpringBootApplication
  static class QueueApplication {
    @Bean
    MeterRegistry meterRegistry() {
      return new SimpleMeterRegistry();
    }

    @RestController
    static class Api {
      @GetMapping("/paced")
      String paced() {
        return "paced";
      }

      @GetMapping("/tight")
      String tight() {
        return "tight";
      }
    }
  }

  private static final String[] PROPERTIES = {
      "server.port=0", "server.address=127.0.0.1", "spring.main.banner-mode=off",
      "headroom.service.name=Queue", "headroom.why=Limits keep the service responsive for every caller.",
      // 5 a second, a burst of 5: a burst of 10 is 5 now and one every 200 ms after
      "headroom.policies.paced.quota=5", "headroom.policies.paced.window=1s",
      "headroom.policies.paced.queue.max-wait=5s", "headroom.policies.paced.queue.max-queued=100",
      // 1 every 2 seconds, 2 may wait
      "headroom.policies.tight.quota=1", "headroom.policies.tight.window=2s",
      "headroom.policies.tight.queue.max-wait=10s", "headroom.policies.tight.queue.max-queued=2",
      "headroom.routes[0].path=/paced", "headroom.routes[0].policies[0]=paced",
      "headroom.routes[1].path=/tight", "headroom.routes[1].policies[0]=tight"};

  private final HttpClient client = HttpClient.newHttpClient();

  private static ConfigurableApplicationContext start(WebApplicationType type) {
    return new SpringApplicationBuilder(QueueApplication.class).web(type).properties(PROPERTIES).run();
  }

  private CompletableFuture<HttpResponse<String>> get(ConfigurableApplicationContext app, String path) {
    int port = app.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
    return client.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
  }

  @ParameterizedTest
  @EnumSource(value = WebApplicationType.class, names = {"SERVLET", "REACTIVE"})
  void aBurstWaitsForItsTurnInsteadOfBeingRefused(WebApplicationType type) throws Exception {
    try (ConfigurableApplicationContext app = start(type)) {
      long began = System.nanoTime();
      List<CompletableFuture<HttpResponse<String>>> burst = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        burst.add(get(app, "/paced"));
      }
      long last = 0;
      for (CompletableFuture<HttpResponse<String>> f : burst) {
        HttpResponse<String> r = f.get(30, TimeUnit.SECONDS);
        assertThat(r.statusCode()).as("every request of the burst, waiting instead of refused").isEqualTo(200);
        assertThat(r.body()).isEqualTo("paced");
        last = Math.max(last, System.nanoTime());
      }
      // The tenth request cannot be admitted before the token bucket has refilled five units (1s):
      // a lower bound set by the policy, not a measure of speed.
      assertThat(Duration.ofNanos(last - began)).isGreaterThanOrEqualTo(Duration.ofMillis(900));
      MeterRegistry meters = app.getBean(MeterRegistry.class);
      assertThat(meters.get("headroom.queue.admitted").tag("policy", "paced").counter().count())
          .as("requests admitted after waiting").isGreaterThanOrEqualTo(1);
      assertThat(meters.get("headroom.queue.waiting").tag("policy", "paced").gauge().value()).isZero();
      assertThat(meters.find("headroom.queue.timeouts").counter()).isNull();
    }
  }

  @ParameterizedTest
  @EnumSource(value = WebApplicationType.class, names = {"SERVLET", "REACTIVE"})
  void aFullQueueIsRefusedAtOnce(WebApplicationType type) throws Exception {
    try (ConfigurableApplicationContext app = start(type)) {
      assertThat(get(app, "/tight").get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
      List<CompletableFuture<HttpResponse<String>>> more = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        more.add(get(app, "/tight"));
      }
      List<Integer> statuses = new ArrayList<>();
      for (CompletableFuture<HttpResponse<String>> f : more) {
        HttpResponse<String> r = f.get(30, TimeUnit.SECONDS);
        statuses.add(r.statusCode());
        if (r.statusCode() == 429) {
          assertThat(r.headers().firstValue("Retry-After")).isPresent();
          assertThat(r.body()).contains("quota-exceeded");
        }
      }
      // two wait their turn (2s and 4s later), two find the queue full (max-queued 2)
      assertThat(statuses).containsExactlyInAnyOrder(200, 200, 429, 429);
    }
  }

  @Test
  void valuesThatAreNotValidStopStartupNamingThePropertyTheValueAndWhatWasExpected() {
    String[] bad = {"headroom.policies.paced.quota=5", "headroom.policies.paced.window=1s",
        "headroom.policies.paced.queue.max-wait=2h", "headroom.policies.paced.queue.max-queued=0",
        "headroom.policies.open.quota=5", "headroom.policies.open.window=1s",
        "headroom.policies.open.queue.max-queued=10",
        "headroom.routes[0].path=/paced", "headroom.routes[0].policies[0]=paced",
        "headroom.routes[0].policies[1]=open"};
    new WebApplicationContextRunner().withConfiguration(AutoConfigurations.of(HeadroomAutoConfiguration.class))
        .withPropertyValues(bad).run(ctx -> assertThat(ctx.getStartupFailure())
            .hasStackTraceContaining("headroom.policies.paced.queue.max-wait: expected the longest a refused request "
                + "waits for its turn, above 0 and at most 1h, such as 500ms, got 'PT2H'")
            .hasStackTraceContaining("headroom.policies.paced.queue.max-queued: expected an integer from 1 to 1000000, "
                + "got '0'")
            .hasStackTraceContaining("headroom.policies.open.queue.max-wait: expected the longest a refused request "
                + "waits for its turn, above 0 and at most 1h, such as 500ms, got nothing"));
    new ReactiveWebApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(HeadroomReactiveAutoConfiguration.class))
        .withPropertyValues(bad).run(ctx -> assertThat(ctx.getStartupFailure())
            .hasStackTraceContaining("headroom.policies.paced.queue.max-wait: expected the longest a refused request"));
  }
}
