package dev.headroom.vend;

import static dev.headroom.vend.Fixtures.assertSameJson;
import static dev.headroom.vend.Fixtures.perMinute;
import static dev.headroom.vend.Fixtures.utf8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.vend.format.Scope;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Inserting the extension data into an upstream's response bytes ({@link VendDecision#decorate})
 * and merging into an upstream's {@code vend.capabilities} result (seed 003, "Discovery").
 */
class ResponseInsertionTest {

  private final Fixtures f = new Fixtures();
  private VendRateLimiter vend;
  private VendDecision decision;
  private String entry;

  @BeforeEach
  void decideOnce() {
    vend = VendRateLimiter.builder(VendRateLimits.builder()
            .limit(Scope.SERVICE, perMinute("svc", 1000))
            .limit(Scope.FUNCTION, "orders.create", perMinute("fn", 100))
            .documentation(URI.create("https://docs.example.com/rate-limits")).build())
        .limiter(f.limiter).maxResponseBytes(4096).build();
    decision = vend.decide(f.call("r1", "orders.list", "checkout"), CallIdentity.none());
    entry = "{\"urn\":\"urn:vnd:ext:rate-limit\",\"data\":{\"limit\":1000,\"used\":1,\"remaining\":999,"
        + "\"window\":{\"value\":1,\"unit\":\"minute\"},\"resets_in\":{\"value\":1,\"unit\":\"minute\"},\"scope\":\"service\"}}";
  }

  private String decorate(String upstream) {
    return new String(decision.decorate(utf8(upstream)), StandardCharsets.UTF_8);
  }

  @Test
  void normal_addsAnExtensionsArray_andKeepsEveryUpstreamByte() {
    String upstream = "{ \"protocol\" : {\"name\":\"vend\",\"version\":\"0.1.0\"},\n  \"id\":\"r1\",\"result\":{\"price\":1.50,\"big\":1e400,"
        + "\"n\":12345678901234567890123,\"s\":\"\\u00e9t\\u00e9\"},\"meta\":{\"x\":[]}\n}\n";
    String out = decorate(upstream);
    int close = upstream.lastIndexOf('}');
    assertThat(out).isEqualTo(upstream.substring(0, close) + ",\"extensions\":[" + entry + "]" + upstream.substring(close));
  }

  @Test
  void existingExtensions_areKept_andOursIsAppended() {
    String upstream = "{\"id\":\"r1\",\"result\":{},\"extensions\":[{\"urn\":\"urn:vnd:ext:tracing\",\"data\":{\"span\":\"a\"}} ],\"meta\":{}}";
    assertThat(decorate(upstream)).isEqualTo("{\"id\":\"r1\",\"result\":{},\"extensions\":[{\"urn\":\"urn:vnd:ext:tracing\","
        + "\"data\":{\"span\":\"a\"}} ," + entry + "],\"meta\":{}}");
    assertThat(decorate("{\"extensions\":[]}")).isEqualTo("{\"extensions\":[" + entry + "]}");
    assertThat(decorate("{}")).isEqualTo("{\"extensions\":[" + entry + "]}");
  }

  @Test
  void existingRateLimitEntry_isReplacedByTheEnforcedOne() {
    String upstream = "{\"id\":\"r1\",\"result\":{\"p\":1.50},\"extensions\":[{\"urn\":\"urn:vnd:ext:rate-limit\",\"data\":{\"limit\":5}},"
        + "{\"urn\":\"urn:vnd:ext:tracing\"}]}";
    assertSameJson(decision.decorate(utf8(upstream)), "{\"id\":\"r1\",\"result\":{\"p\":1.50},\"extensions\":["
        + "{\"urn\":\"urn:vnd:ext:tracing\"}," + entry + "]}");
    assertThat(decorate(upstream)).contains("\"p\":1.50");
  }

  @Test
  void tooLarge_notJson_orNotAnObject_passesThroughUnchanged() {
    byte[] large = utf8("{\"id\":\"r1\",\"result\":\"" + "x".repeat(5000) + "\"}");
    assertThat(decision.decorate(large)).isSameAs(large);
    for (String s : new String[] {"<html>502 Bad Gateway</html>", "", "[1,2]", "\"ok\"", "{\"id\":\"r1\"", "{} trailing",
        "{\"a\":1,\"a\":2}", "{\"extensions\":{\"urn\":\"x\"}}", "{\"extensions\":null}", "{\"a\":" + "[".repeat(100) + "]".repeat(100) + "}"}) {
      byte[] body = utf8(s);
      assertThat(decision.decorate(body)).as(s).isSameAs(body);
    }
  }

  @Test
  void capabilities_mergedIntoAnUpstreamResult() {
    String upstream = "{\"protocol\":{\"name\":\"vend\",\"version\":\"0.1.0\"},\"id\":\"req_caps\",\"result\":{\"service\":\"orders-api\","
        + "\"functions\":[\"orders.create\",\"orders.list\"],\"extensions\":[{\"urn\":\"urn:vnd:ext:tracing\"}],"
        + "\"rate_limits\":[{\"scope\":\"service\",\"limit\":5,\"window\":{\"value\":1,\"unit\":\"second\"}},"
        + "{\"scope\":\"user\",\"limit\":9,\"window\":{\"value\":1,\"unit\":\"day\"}}],\"version\":1.50}}";
    assertSameJson(vend.mergeCapabilities(utf8(upstream)), "{\"protocol\":{\"name\":\"vend\",\"version\":\"0.1.0\"},\"id\":\"req_caps\","
        + "\"result\":{\"service\":\"orders-api\",\"functions\":[\"orders.create\",\"orders.list\"],"
        + "\"extensions\":[{\"urn\":\"urn:vnd:ext:tracing\"},{\"urn\":\"urn:vnd:ext:rate-limit\",\"documentation\":\"https://docs.example.com/rate-limits\"}],"
        + "\"rate_limits\":[{\"scope\":\"user\",\"limit\":9,\"window\":{\"value\":1,\"unit\":\"day\"}},"
        + "{\"scope\":\"service\",\"limit\":1000,\"window\":{\"value\":1,\"unit\":\"minute\"}},"
        + "{\"scope\":\"function\",\"function\":\"orders.create\",\"limit\":100,\"window\":{\"value\":1,\"unit\":\"minute\"}}],\"version\":1.50}}");
    assertThat(new String(vend.mergeCapabilities(utf8(upstream)), StandardCharsets.UTF_8)).contains("\"version\":1.50");
  }

  @Test
  void capabilities_withoutExtensionsOrRateLimits_getBoth_andAnExistingDeclarationGetsDocumentation() {
    assertSameJson(vend.mergeCapabilities(utf8("{\"id\":\"c\",\"result\":{\"extensions\":[{\"urn\":\"urn:vnd:ext:rate-limit\"}]}}")),
        "{\"id\":\"c\",\"result\":{\"extensions\":[{\"urn\":\"urn:vnd:ext:rate-limit\",\"documentation\":\"https://docs.example.com/rate-limits\"}],"
            + "\"rate_limits\":[{\"scope\":\"service\",\"limit\":1000,\"window\":{\"value\":1,\"unit\":\"minute\"}},"
            + "{\"scope\":\"function\",\"function\":\"orders.create\",\"limit\":100,\"window\":{\"value\":1,\"unit\":\"minute\"}}]}}");
    assertThat(Fixtures.tree(vend.mergeCapabilities(utf8("{\"id\":\"c\",\"result\":{}}"))).at("/result/rate_limits").size()).isEqualTo(2);
  }

  @Test
  void capabilities_passThroughWhenTheyCannotBeMerged() {
    for (String s : new String[] {"not json", "{\"id\":\"c\",\"result\":null,\"errors\":[]}", "{\"result\":{\"rate_limits\":{}}}",
        "{\"result\":{\"extensions\":\"none\"}}", "{\"result\":\"" + "x".repeat(5000) + "\"}"}) {
      byte[] body = utf8(s);
      assertThat(vend.mergeCapabilities(body)).as(s).isSameAs(body);
    }
  }
}
