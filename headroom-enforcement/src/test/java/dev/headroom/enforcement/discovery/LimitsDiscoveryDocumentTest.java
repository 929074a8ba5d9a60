package dev.headroom.enforcement.discovery;

import static dev.headroom.http.body.GracefulBoundariesSchemas.LIMITS;
import static dev.headroom.http.body.GracefulBoundariesSchemas.violations;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.Algorithm;
import dev.headroom.ManualTicker;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.LimitType;
import dev.headroom.http.body.PolicyTexts;
import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Graceful Boundaries section 1: the limits discovery document, built from routes and policies. */
class LimitsDiscoveryDocumentTest {

  private static final QuotaPolicy SCANS = QuotaPolicy.builder("scans").quota(10).window(Duration.ofHours(1))
      .partitioning("client-ip").build();
  private static final QuotaPolicy KEYS = QuotaPolicy.builder("keys").quota(1000).window(Duration.ofDays(30))
      .algorithm(Algorithm.FIXED_WINDOW).partitioning("api-key").build();
  private static final QuotaPolicy INFLIGHT = QuotaPolicy.builder("inflight").quota(4).window(Duration.ofMinutes(1))
      .unit(QuotaUnit.CONCURRENT_REQUESTS).partitioning("user").build();
  private static final QuotaPolicy BYTES = QuotaPolicy.builder("bytes").quota(1_000_000).window(Duration.ofMinutes(1))
      .unit(QuotaUnit.CONTENT_BYTES).build();
  private static final PolicyTexts WHY = PolicyTexts.builder("Limits keep the service available for everyone.").build();

  private static LimitRefusals refusals(PolicyTexts defaults) {
    return LimitRefusals.builder().ticker(ManualTicker.atFixedInstant()).defaults(defaults).build();
  }

  @Test
  void typesAndFieldsAreDerivedFromThePolicies() {
    LimitsDiscoveryDocument doc = LimitsDiscoveryDocument.builder("Example", "Scans web sites.")
        .texts(refusals(WHY)::texts)
        .route(DiscoveryRoute.builder("GET", "/api/scan").key("scan").policy(SCANS).policy(KEYS).note("Heavy.").build())
        .route(DiscoveryRoute.builder("POST", "/api/upload").policy(INFLIGHT).policy(BYTES).build())
        .route(DiscoveryRoute.builder("GET", "/admin/stats").policy(SCANS).listed(false).build())
        .build();
    assertThat(doc.toJson()).isEqualTo("{\"service\":\"Example\",\"description\":\"Scans web sites.\","
        + "\"conformance\":\"level-2\",\"limits\":{"
        + "\"scan\":{\"endpoint\":\"/api/scan\",\"method\":\"GET\",\"limits\":["
        + "{\"type\":\"ip-rate\",\"limitId\":\"scans\",\"limitType\":\"ip-rate\",\"scope\":\"ip\",\"maxRequests\":10,"
        + "\"windowSeconds\":3600,\"description\":\"10 requests per hour per client address.\"},"
        + "{\"type\":\"quota\",\"limitId\":\"keys\",\"limitType\":\"quota\",\"scope\":\"key\",\"maxRequests\":1000,"
        + "\"windowSeconds\":2592000,\"description\":\"1000 requests per 30 days per API key.\"}],\"note\":\"Heavy.\"},"
        + "\"POST /api/upload\":{\"endpoint\":\"/api/upload\",\"method\":\"POST\",\"limits\":["
        + "{\"type\":\"concurrency\",\"limitId\":\"inflight\",\"limitType\":\"concurrency\",\"scope\":\"user\","
        + "\"maxRequests\":4,\"windowSeconds\":60,\"description\":\"4 concurrent requests per user.\"},"
        + "{\"type\":\"cost-limit\",\"limitId\":\"bytes\",\"limitType\":\"cost-limit\",\"scope\":\"global\","
        + "\"maxRequests\":1000000,\"windowSeconds\":60,\"costMetric\":\"bytes\","
        + "\"description\":\"1000000 bytes per minute across all callers.\"}]}}}");
    assertThat(violations(LIMITS, doc.toJson())).isEmpty();
    assertThat(doc.toJson()).doesNotContain("/admin"); // SC-4
  }

  @Test
  void conformanceIsComputedFromWhatIsConfigured() {
    DiscoveryRoute scan = DiscoveryRoute.builder("GET", "/api/scan").policy(SCANS).build();
    PolicyTexts guided = WHY.toBuilder().alternativeEndpoint("/api/result").build();
    assertThat(LimitsDiscoveryDocument.builder("S", "D").texts(refusals(WHY)::texts).build().conformance())
        .isEqualTo(ConformanceLevel.NOT_APPLICABLE);
    assertThat(LimitsDiscoveryDocument.builder("S", "D").texts(refusals(WHY)::texts).route(scan).proactiveHeaders(true).build()
        .conformance()).isEqualTo(ConformanceLevel.LEVEL_2);
    assertThat(LimitsDiscoveryDocument.builder("S", "D").texts(refusals(guided)::texts).route(scan).build().conformance())
        .isEqualTo(ConformanceLevel.LEVEL_3);
    LimitsDiscoveryDocument four = LimitsDiscoveryDocument.builder("S", "D").texts(refusals(guided)::texts).route(scan)
        .proactiveHeaders(true).changelog("/limits/changelog.json").feed("https://api.example.com/limits/feed.xml")
        .extension("actionBoundaries", "/.well-known/action-boundaries").origin(URI.create("https://api.example.com"))
        .build();
    assertThat(four.conformance()).isEqualTo(ConformanceLevel.LEVEL_4);
    assertThat(four.toJson()).contains("\"conformance\":\"level-4\",\"changelog\":\"/limits/changelog.json\","
        + "\"feed\":\"https://api.example.com/limits/feed.xml\",\"extensions\":{\"actionBoundaries\":\"/.well-known/action-boundaries\"}");
    assertThat(violations(LIMITS, four.toJson())).isEmpty();
    // Level 1 needs every non-success body structured; a host relaying raw errors delivers none.
    assertThat(LimitsDiscoveryDocument.builder("S", "D").texts(refusals(guided)::texts).route(scan).proactiveHeaders(true)
        .structuredErrors(false).build().conformance()).isEqualTo(ConformanceLevel.NONE);
  }

  /** Graceful Boundaries "Self-Assertion and External Validation": a declared level is published as declared. */
  @Test
  void aDeclaredLevelIsPublishedAndAnOverclaimIsReported() {
    DiscoveryRoute scan = DiscoveryRoute.builder("GET", "/api/scan").policy(SCANS).build();
    LimitsDiscoveryDocument high = LimitsDiscoveryDocument.builder("S", "D").texts(refusals(WHY)::texts).route(scan)
        .proactiveHeaders(true).declare(ConformanceLevel.LEVEL_4).build();
    assertThat(high.conformance()).isEqualTo(ConformanceLevel.LEVEL_4);
    assertThat(high.computed()).isEqualTo(ConformanceLevel.LEVEL_2);
    assertThat(high.overclaims()).isTrue();
    assertThat(high.shortfall()).contains("policy 'scans' of GET /api/scan offers no cachedResultUrl, alternativeEndpoint or upgradeUrl (level 3)");
    assertThat(high.toJson()).contains("\"conformance\":\"level-4\"");
    LimitsDiscoveryDocument low = LimitsDiscoveryDocument.builder("S", "D").texts(refusals(WHY)::texts).route(scan)
        .declare(ConformanceLevel.LEVEL_1).build();
    assertThat(low.conformance()).isEqualTo(ConformanceLevel.LEVEL_1);
    assertThat(low.overclaims()).isFalse();
    assertThat(ConformanceLevel.fromToken("level-3")).isEqualTo(ConformanceLevel.LEVEL_3);
    assertThatThrownBy(() -> ConformanceLevel.fromToken("3"))
        .hasMessage("conformance: '3' is not valid; expected one of [not-applicable, none, level-1, level-2, level-3, level-4]");
  }

  @Test
  void operatorTextsOverrideTypeIdAndDescription() {
    PolicyTexts cooldown = WHY.toBuilder().limitType(LimitType.COOLDOWN).limitId("scan-cooldown")
        .description("One scan per minute.").build();
    LimitsDiscoveryDocument doc = LimitsDiscoveryDocument.builder("S", "D").texts(p -> cooldown)
        .route(DiscoveryRoute.builder("GET", "/api/scan").policy(SCANS).build()).build();
    assertThat(doc.toJson()).contains("{\"type\":\"cooldown\",\"limitId\":\"scan-cooldown\",\"scope\":\"ip\"")
        .contains("\"description\":\"One scan per minute.\"");
  }

  @Test
  void etagIsAStrongContentHashAndRevalidates() {
    LimitsDiscoveryDocument a = LimitsDiscoveryDocument.builder("S", "D").texts(refusals(WHY)::texts)
        .route(DiscoveryRoute.builder("GET", "/x").policy(SCANS).build()).build();
    LimitsDiscoveryDocument same = LimitsDiscoveryDocument.builder("S", "D").texts(refusals(WHY)::texts)
        .route(DiscoveryRoute.builder("GET", "/x").policy(SCANS).build()).build();
    LimitsDiscoveryDocument other = LimitsDiscoveryDocument.builder("S", "D2").texts(refusals(WHY)::texts)
        .route(DiscoveryRoute.builder("GET", "/x").policy(SCANS).build()).build();
    assertThat(a.etag()).isEqualTo(same.etag()).isNotEqualTo(other.etag()).matches("\"[A-Za-z0-9_-]{22}\"");
    assertThat(EntityTag.matchesIfNoneMatch(a.etag(), a.etag())).isTrue();
    assertThat(EntityTag.matchesIfNoneMatch("\"x\", W/" + a.etag(), a.etag())).isTrue();
    assertThat(EntityTag.matchesIfNoneMatch("*", a.etag())).isTrue();
    assertThat(EntityTag.matchesIfNoneMatch(other.etag(), a.etag())).isFalse();
    assertThat(EntityTag.matchesIfNoneMatch(null, a.etag())).isFalse();
    assertThat(EntityTag.matchesIfNoneMatch("\"x\",".repeat(2000), a.etag())).isFalse();
  }

  @Test
  void badConfigurationIsRefused() {
    DiscoveryRoute scan = DiscoveryRoute.builder("GET", "/api/scan").policy(SCANS).build();
    assertThatThrownBy(() -> LimitsDiscoveryDocument.builder("S", "D").texts(refusals(WHY)::texts).route(scan).route(scan).build())
        .hasMessageContaining("key 'GET /api/scan' is already used");
    assertThatThrownBy(() -> LimitsDiscoveryDocument.builder("S", "D").texts(refusals(WHY)::texts).feed("https://other.example/feed").build())
        .hasMessageContaining("feed: expected a relative path or a same-origin absolute URL");
    assertThatThrownBy(() -> LimitsDiscoveryDocument.builder("", "D").texts(refusals(WHY)::texts).build())
        .hasMessageContaining("service: expected 1 to 200 characters");
    assertThatThrownBy(() -> LimitsDiscoveryDocument.builder("S", "D").build()).hasMessageStartingWith("texts: required");
    assertThatThrownBy(() -> DiscoveryRoute.builder("get", "/x").build()).hasMessageContaining("route method");
    assertThatThrownBy(() -> DiscoveryRoute.builder("GET", "x y").build()).hasMessageContaining("path template");
    // an unreadable partitioning no longer reaches the document: the policy refuses it when built
    assertThatThrownBy(() -> QuotaPolicy.builder("odd").quota(1).window(Duration.ofSeconds(1)).partitioning("cookie").build())
        .hasMessageContaining("policy 'odd': partitioning").hasMessageContaining("'cookie'");
  }
}
