package dev.headroom.spring.boot.rules;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.enforcement.partition.ApiKeys;
import dev.headroom.spring.boot.HeadroomAutoConfiguration;
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
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code headroom.policies.NAME.allow.*} and {@code headroom.routes[].shadow-fields} in a started
 * application, over its real port (the client is 127.0.0.1): a client in an allowed CIDR block and a
 * caller presenting a key whose SHA-256 is listed bypass the policy (headroom-http {@code AllowList},
 * as the gateway's {@code allow}); settings that are not valid stop startup naming the property; a
 * shadow policy's fields are sent, {@code r=0} once it would refuse (draft-ietf-httpapi-ratelimit-headers-09
 * section 6, Appendix B.1.1), the request served.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RulesBootTest {

  @SpringBootApplication
  static class RulesApplication {
    @RestController
    static class Api {
      @GetMapping({"/open", "/office", "/partner", "/trial"})
      String hello() {
        return "hello";
      }
    }
  }

  private final HttpClient client = HttpClient.newHttpClient();
  private ConfigurableApplicationContext app;
  private int port;

  @BeforeAll
  void start() {
    // fixed windows of a week: no boundary frees a unit during the test but once a week for a second
    app = new SpringApplicationBuilder(RulesApplication.class).properties(Map.ofEntries(
        Map.entry("server.port", "0"), Map.entry("server.address", "127.0.0.1"), Map.entry("spring.main.banner-mode", "off"),
        Map.entry("headroom.service.name", "Allow"),
        Map.entry("headroom.why", "Limits keep the service responsive for every caller."),
        Map.entry("headroom.policies.loopback.quota", "1"), Map.entry("headroom.policies.loopback.window", "7d"),
        Map.entry("headroom.policies.loopback.algorithm", "fixed-window"),
        Map.entry("headroom.policies.loopback.allow.cidrs[0]", "127.0.0.0/8"),
        Map.entry("headroom.policies.office.quota", "1"), Map.entry("headroom.policies.office.window", "7d"),
        Map.entry("headroom.policies.office.algorithm", "fixed-window"),
        Map.entry("headroom.policies.office.allow.cidrs[0]", "10.0.0.0/8"),
        Map.entry("headroom.policies.partner.quota", "1"), Map.entry("headroom.policies.partner.window", "7d"),
        Map.entry("headroom.policies.partner.algorithm", "fixed-window"),
        Map.entry("headroom.policies.partner.allow.api-keys[0]", ApiKeys.sha256("partner-key")),
        Map.entry("headroom.policies.partner.allow.header", "X-Partner"),
        Map.entry("headroom.routes[0].path", "/open"), Map.entry("headroom.routes[0].policies[0]", "loopback"),
        Map.entry("headroom.routes[1].path", "/office"), Map.entry("headroom.routes[1].policies[0]", "office"),
        Map.entry("headroom.routes[2].path", "/partner"), Map.entry("headroom.routes[2].policies[0]", "partner"),
        Map.entry("headroom.policies.units.quota", "100"), Map.entry("headroom.policies.units.window", "7d"),
        Map.entry("headroom.policies.units.algorithm", "fixed-window"),
        Map.entry("headroom.policies.trial.quota", "1"), Map.entry("headroom.policies.trial.window", "7d"),
        Map.entry("headroom.policies.trial.algorithm", "fixed-window"),
        Map.entry("headroom.routes[3].path", "/trial"), Map.entry("headroom.routes[3].policies[0]", "units"),
        Map.entry("headroom.routes[3].shadow-policies[0]", "trial"), Map.entry("headroom.routes[3].shadow-fields", "true"))).run();
    port = app.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
  }

  @AfterAll
  void stop() {
    app.close();
  }

  HttpResponse<String> get(String path, String header, String value) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(30));
    if (header != null) {
      b.header(header, value);
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void aClientInAnAllowedBlockBypassesThePolicy() throws Exception {
    for (int i = 0; i < 3; i++) {
      HttpResponse<String> r = get("/open", null, null);
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.headers().firstValue("RateLimit")).isEmpty();
    }
    assertThat(get("/office", null, null).statusCode()).isEqualTo(200);
    assertThat(get("/office", null, null).statusCode()).isEqualTo(429);
  }

  @Test
  void aKeyWhoseHashIsListedBypassesThePolicy() throws Exception {
    for (int i = 0; i < 3; i++) {
      assertThat(get("/partner", "X-Partner", "partner-key").statusCode()).isEqualTo(200);
    }
    assertThat(get("/partner", "X-Partner", "another-key").statusCode()).isEqualTo(200);
    assertThat(get("/partner", "X-Partner", "another-key").statusCode()).isEqualTo(429);
  }

  @Test
  void aShadowPolicysFieldsAreSentAlsoWhenItWouldRefuse() throws Exception {
    HttpResponse<String> first = get("/trial", null, null);
    assertThat(first.headers().firstValue("RateLimit-Policy").orElseThrow()).contains("\"trial\";q=1");
    for (int i = 0; i < 2; i++) {
      HttpResponse<String> r = get("/trial", null, null);
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.headers().firstValue("Retry-After")).isEmpty();
      assertThat(r.headers().firstValue("RateLimit").orElseThrow()).contains("\"trial\";r=0;t=");
    }
  }

  @Test
  void settingsThatAreNotValidStopStartupNamingTheProperty() {
    WebApplicationContextRunner runner = new WebApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(HeadroomAutoConfiguration.class))
        .withPropertyValues("headroom.policies.api.quota=60", "headroom.policies.api.window=60s",
            "headroom.routes[0].path=/api/**", "headroom.routes[0].policies[0]=api");
    runner.withPropertyValues("headroom.policies.api.allow.api-keys[0]=my-secret-key").run(ctx -> {
      assertThat(ctx.getStartupFailure()).hasStackTraceContaining("headroom.policies.api.allow.api-keys")
          .hasStackTraceContaining("never the key itself");
      assertThat(ctx.getStartupFailure().getMessage()).doesNotContain("my-secret-key");
    });
    runner.withPropertyValues("headroom.policies.api.allow.cidrs[0]=10.0.0.1/8").run(ctx ->
        assertThat(ctx.getStartupFailure()).hasStackTraceContaining("headroom.policies.api.allow.cidrs"));
  }
}
