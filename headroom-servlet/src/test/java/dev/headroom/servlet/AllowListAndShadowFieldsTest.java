package dev.headroom.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.Algorithm;
import dev.headroom.ManualTicker;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.enforcement.partition.AllowList;
import dev.headroom.enforcement.partition.ApiKeys;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.PolicyTexts;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Allow lists (headroom-http {@code AllowList}, the gateway's {@code allow}) and the fields of
 * shadow policies in the servlet filter, on Tomcat over real sockets (the client is 127.0.0.1).
 * A shadow item that would refuse is {@code r=0} with {@code t} until it would allow
 * (draft-ietf-httpapi-ratelimit-headers-09 section 6 and Appendix B.1.1), the request served.
 */
class AllowListAndShadowFieldsTest {
  static QuotaPolicy policy(String name, long quota) {
    return QuotaPolicy.builder(name).quota(quota).window(Duration.ofMinutes(1)).algorithm(Algorithm.FIXED_WINDOW).build();
  }

  TomcatWithFilter tomcat;

  @BeforeEach
  void start() throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    HeadroomFilter filter = HeadroomFilter.builder().limiter(QuotaLimiter.inMemory())
        .refusals(LimitRefusals.builder().ticker(ticker).defaults(PolicyTexts.builder("Limits keep the service fair.").build()).build())
        .route(Route.builder("/open").policy(policy("loopback-free", 1)).build())
        .route(Route.builder("/elsewhere").policy(policy("office-free", 1)).build())
        .route(Route.builder("/partner").policy(policy("partner-free", 1)).build())
        .route(Route.builder("/trial").policy(policy("units", 10)).shadowPolicy(policy("trial", 1), true)
            .shadowPolicy(policy("quiet", 1)).build())
        .allow("loopback-free", AllowList.of("allow", List.of("127.0.0.0/8"), List.of(), AllowList.DEFAULT_HEADER))
        .allow("office-free", AllowList.of("allow", List.of("10.0.0.0/8"), List.of(), AllowList.DEFAULT_HEADER))
        .allow("partner-free", AllowList.of("allow", List.of(), List.of(ApiKeys.sha256("partner-key")), "X-Partner"))
        .ticker(ticker).build();
    tomcat = new TomcatWithFilter(filter);
  }

  @AfterEach
  void stop() throws Exception {
    tomcat.close();
  }

  @Test
  void aClientInAnAllowedBlockBypassesThePolicy() throws Exception {
    for (int i = 0; i < 3; i++) {
      HttpResponse<String> r = tomcat.get("/open", null, null);
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.headers().firstValue("RateLimit")).isEmpty(); // not decided at all
    }
    assertThat(tomcat.get("/elsewhere", null, null).statusCode()).isEqualTo(200);
    assertThat(tomcat.get("/elsewhere", null, null).statusCode()).isEqualTo(429); // 127.0.0.1 is not in 10/8
  }

  @Test
  void aKeyWhoseHashIsListedBypassesThePolicy() throws Exception {
    for (int i = 0; i < 3; i++) {
      HttpResponse<String> r = tomcat.get("/partner", "X-Partner", "partner-key");
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.headers().firstValue("RateLimit")).isEmpty();
    }
    assertThat(tomcat.get("/partner", "X-Partner", "someone-else").statusCode()).isEqualTo(200);
    assertThat(tomcat.get("/partner", "X-Partner", "someone-else").statusCode()).isEqualTo(429);
    assertThat(tomcat.get("/partner", "X-Api-Key", "partner-key").statusCode()).isEqualTo(429); // another header
    assertThat(tomcat.get("/partner", "X-Partner", "partner-key").statusCode()).isEqualTo(200);
  }

  @Test
  void shadowFieldsAreSentAlsoWhenTheShadowPolicyWouldRefuse() throws Exception {
    HttpResponse<String> first = tomcat.get("/trial", null, null);
    assertThat(first.statusCode()).isEqualTo(200);
    assertThat(first.headers().firstValue("RateLimit-Policy").orElseThrow()).contains("\"trial\";q=1")
        .doesNotContain("quiet");
    assertThat(first.headers().firstValue("RateLimit").orElseThrow()).contains("\"units\";r=9").contains("\"trial\";r=0;t=");
    for (int i = 0; i < 3; i++) {
      HttpResponse<String> r = tomcat.get("/trial", null, null);
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.headers().firstValue("Retry-After")).isEmpty();
      assertThat(r.headers().firstValue("RateLimit").orElseThrow()).matches("\"units\";r=" + (8 - i)
          + ";t=[0-9]+, \"trial\";r=0;t=[1-9][0-9]*");
    }
  }

  @Test
  void badListsAreRefusedNamingTheField() {
    assertThatThrownBy(() -> AllowList.of("policies.api.allow", List.of(), List.of("partner-key"), "X-Api-Key"))
        .hasMessageStartingWith("policies.api.allow.apiKeys: an entry of 11 characters is not valid")
        .hasMessageContaining("never the key itself");
    assertThatThrownBy(() -> AllowList.of("policies.api.allow", List.of("10.0.0.1/8"), List.of(), "X-Api-Key"))
        .hasMessageStartingWith("policies.api.allow.cidrs: ");
    assertThatThrownBy(() -> AllowList.of("policies.api.allow", List.of(), List.of(), "X Api"))
        .hasMessageStartingWith("policies.api.allow.header: 'X Api' is not valid");
    assertThatThrownBy(() -> HeadroomFilter.builder().limiter(QuotaLimiter.inMemory())
        .refusals(LimitRefusals.builder().ticker(ManualTicker.atFixedInstant())
            .defaults(PolicyTexts.builder("Limits keep the service fair.").build()).build())
        .route(Route.builder("/a").policy(policy("a", 1)).build())
        .allow("nope", AllowList.NONE).build())
        .hasMessageStartingWith("allow: policy 'nope' is not a policy of any route; expected one of [a]");
  }
}
