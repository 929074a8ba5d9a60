package dev.headroom.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * Reading the {@code endpoint} path patterns of a discovery document (Graceful Boundaries section 1:
 * "path pattern", left undefined by the spec) in the one grammar every Headroom front end writes
 * ({@code dev.headroom.http.path.PathTemplate}).
 */
class DiscoveredLimitsReadingTest {

  private static DiscoveredLimits read(String... entries) {
    StringBuilder limits = new StringBuilder();
    for (int i = 0; i < entries.length; i++) {
      limits.append(i == 0 ? "" : ",").append("\"e").append(i).append("\":{").append(entries[i])
          .append(",\"limits\":[{\"type\":\"ip-rate\",\"maxRequests\":5,\"windowSeconds\":60,\"description\":\"d\"}]}");
    }
    return DiscoveredLimits.parse(("{\"service\":\"S\",\"limits\":{" + limits + "}}").getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void aTrailingStarWrittenByAServletRouteIsOneSegmentNotTheSubtree() {
    DiscoveredLimits.Endpoint e = read("\"endpoint\":\"/a/*\",\"method\":\"GET\"").endpoints().get(0);
    assertThat(e.matches("GET", "/a/x")).isTrue();
    assertThat(e.matches("GET", "/a/x/y")).isFalse();
    assertThat(e.matches("GET", "/a")).isFalse();
    assertThat(e.isTemplate()).isTrue();
  }

  @Test
  void theRestOfThePathIsDoubleStar() {
    DiscoveredLimits.Endpoint e = read("\"endpoint\":\"/a/**\",\"method\":\"GET\"").endpoints().get(0);
    assertThat(e.matches("GET", "/a/x/y")).isTrue();
    assertThat(e.matches("GET", "/a")).isTrue();
  }

  @Test
  void colonVariablesThatOtherServicesPublishAreOneSegment() {
    DiscoveredLimits.Endpoint e = read("\"endpoint\":\"/items/:id\",\"method\":\"GET\"").endpoints().get(0);
    assertThat(e.matches("GET", "/items/7")).isTrue();
    assertThat(e.matches("GET", "/items/7/parts")).isFalse();
    assertThat(e.template()).hasToString("/items/{id}");
  }

  @Test
  void literalsComparePercentDecoded() {
    DiscoveredLimits.Endpoint e = read("\"endpoint\":\"/api/items\",\"method\":\"GET\"").endpoints().get(0);
    assertThat(e.matches("GET", "/api/%69tems")).isTrue();
    assertThat(e.matches("GET", "/api/items/")).isTrue();
    assertThat(e.isTemplate()).isFalse();
  }

  @Test
  void anInvalidPatternIsSkippedWithADiagnosticNeverThrown() {
    DiscoveredLimits doc = read("\"endpoint\":\"/a/**/b\",\"method\":\"GET\"", "\"endpoint\":\"api/scan\",\"method\":\"GET\"",
        "\"endpoint\":\"/files/*.json\",\"method\":\"GET\"", "\"endpoint\":\"/ok\",\"method\":\"GET\"");
    assertThat(doc.endpoints()).extracting(DiscoveredLimits.Endpoint::key).containsExactly("e3");
    assertThat(doc.issues()).hasSize(3);
    assertThat(doc.issues().get(0)).startsWith("limits.e0.endpoint: path template '/a/**/b': at position 3: expected ** only")
        .endsWith("; skipped");
    assertThat(doc.issues().get(1)).contains("limits.e1.endpoint").contains("starting with /");
    assertThat(doc.issues().get(2)).contains("limits.e2.endpoint").contains("'*.json'");
  }

  @Test
  void anEntryForAnyMethodAppliesToEveryMethod() {
    DiscoveredLimits doc = read("\"endpoint\":\"/a\",\"method\":\"ANY\"", "\"endpoint\":\"/b\",\"method\":\"GET\"");
    assertThat(doc.endpoints().get(0).method()).isEmpty();
    assertThat(doc.endpoints().get(0).matches("POST", "/a")).isTrue();
    assertThat(doc.endpoints().get(1).matches("POST", "/b")).isFalse();
  }
}
