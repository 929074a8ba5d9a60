package dev.headroom.vend;

import static dev.headroom.vend.Fixtures.assertSameJson;
import static dev.headroom.vend.Fixtures.perMinute;
import static dev.headroom.vend.Fixtures.utf8;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.headroom.vend.format.RateLimitExtension;
import dev.headroom.vend.format.Scope;
import dev.headroom.vend.format.VendRequest;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Every JSON example of seed 003 (vend rate-limit extension), reproduced from configured policies
 * and a manual clock standing at the start of a minute, then compared as JSON trees.
 */
class SeedExamplesTest {

  private final Fixtures f = new Fixtures();

  /** Seed 003, "Examples / Request with Extension", verbatim. */
  static final String REQUEST_WITH_EXTENSION = """
      { "protocol": { "name": "vend", "version": "0.1.0" }, "id": "req_123", "call": { "function": "orders.create", "version": "1", "arguments": { "customer_id": 42, "items": [{ "sku": "WIDGET-01", "quantity": 1 }] } }, "extensions": [ { "urn": "urn:vnd:ext:rate-limit", "options": {} } ]}
      """;

  private VendRequest withId(String id) {
    return f.request(REQUEST_WITH_EXTENSION.replace("req_123", id));
  }

  private static byte[] upstream(String id, String result) {
    return utf8("{\"protocol\":{\"name\":\"vend\",\"version\":\"0.1.0\"},\"id\":\"" + id + "\",\"result\":" + result + "}");
  }

  private void spend(VendRateLimiter vend, String function, String caller, int n) {
    for (int i = 0; i < n; i++) {
      assertThat(vend.decide(f.call("warm-" + i, function, caller), CallIdentity.none()).allowed()).isTrue();
    }
  }

  @Test
  void requestWithExtensionIsReadField_by_field() {
    VendRequest r = f.request(REQUEST_WITH_EXTENSION);
    assertThat(r.id()).isEqualTo("req_123");
    assertThat(r.protocolVersion()).isEqualTo("0.1.0");
    assertThat(r.function()).isEqualTo("orders.create");
    assertThat(r.functionVersion()).contains("1");
    assertThat(r.arguments()).isEqualTo(Fixtures.tree("{\"customer_id\":42,\"items\":[{\"sku\":\"WIDGET-01\",\"quantity\":1}]}"));
    assertThat(r.declaresRateLimit()).isTrue();
    assertThat(r.extensions()).hasSize(1);
    assertThat(r.extensions().get(0).options()).isEmpty();
    assertThat(r.caller()).isEmpty();
    assertThat(r.requestedScope()).isEmpty();
  }

  @Test
  void normalResponse_serviceScope_42of1000_resetsIn47s() {
    VendRateLimiter vend = f.vend(VendRateLimits.builder().limit(Scope.SERVICE, perMinute("vend-service", 1000)).build());
    spend(vend, "orders.create", null, 41);
    f.ticker.advance(Duration.ofSeconds(13));
    VendDecision d = vend.decide(withId("req_123"), CallIdentity.none());

    assertThat(d.allowed()).isTrue();
    assertSameJson(d.decorate(upstream("req_123", "{ \"order_id\": 456, \"status\": \"created\" }")), """
        { "protocol": { "name": "vend", "version": "0.1.0" }, "id": "req_123", "result": { "order_id": 456, "status": "created" }, "extensions": [ { "urn": "urn:vnd:ext:rate-limit", "data": { "limit": 1000, "used": 42, "remaining": 958, "window": { "value": 1, "unit": "minute" }, "resets_in": { "value": 47, "unit": "second" }, "scope": "service" } } ]}
        """);
    // Built locally it is the same document.
    assertSameJson(d.successResponse(Fixtures.tree("{\"order_id\":456,\"status\":\"created\"}")), new String(
        d.decorate(upstream("req_123", "{\"order_id\":456,\"status\":\"created\"}")), StandardCharsets.UTF_8));
  }

  @Test
  void approachingLimit_under10PercentRemaining_carriesWarning() {
    VendRateLimiter vend = f.vend(VendRateLimits.builder().limit(Scope.SERVICE, perMinute("vend-service", 1000)).build());
    spend(vend, "orders.create", null, 984);
    f.ticker.advance(Duration.ofSeconds(48));
    VendDecision d = vend.decide(withId("req_456"), CallIdentity.none());

    assertSameJson(d.decorate(upstream("req_456", "{\"success\":true}")), """
        { "protocol": { "name": "vend", "version": "0.1.0" }, "id": "req_456", "result": { "success": true }, "extensions": [ { "urn": "urn:vnd:ext:rate-limit", "data": { "limit": 1000, "used": 985, "remaining": 15, "window": { "value": 1, "unit": "minute" }, "resets_in": { "value": 12, "unit": "second" }, "scope": "service", "warning": "Rate limit nearly exhausted" } } ]}
        """);
  }

  @Test
  void rateLimitedError_functionScope_429_retryAfterMatchesHeaderValue() {
    VendRateLimiter vend = f.vend(VendRateLimits.builder()
        .limit(Scope.FUNCTION, "orders.create", perMinute("vend-orders-create", 100)).build());
    spend(vend, "orders.create", null, 100);
    f.ticker.advance(Duration.ofSeconds(37));
    VendDecision d = vend.decide(withId("req_789"), CallIdentity.none());

    assertThat(d.allowed()).isFalse();
    assertThat(d.httpStatus()).isEqualTo(429);
    assertThat(d.retryAfterSeconds()).isEqualTo(23);
    assertThat(d.decision().orElseThrow().retryAfterSeconds()).isEqualTo(23);
    assertSameJson(d.errorResponse(), """
        { "protocol": { "name": "vend", "version": "0.1.0" }, "id": "req_789", "result": null, "errors": [{ "code": "RATE_LIMITED", "message": "Rate limit exceeded for orders.create", "retryable": true, "details": { "limit": 100, "used": 100, "window": { "value": 1, "unit": "minute" }, "retry_after": { "value": 23, "unit": "second" }, "scope": "function", "function": "orders.create" } }], "extensions": [ { "urn": "urn:vnd:ext:rate-limit", "data": { "limit": 100, "used": 100, "remaining": 0, "window": { "value": 1, "unit": "minute" }, "resets_in": { "value": 23, "unit": "second" }, "scope": "function" } } ]}
        """);
    // "The Retry-After value MUST ... match the retry_after.value in error details".
    assertThat(Fixtures.tree(d.errorResponse()).at("/errors/0/details/retry_after/value").asLong())
        .isEqualTo(d.retryAfterSeconds());
  }

  @Test
  void multipleScopes_sectionExample_globalAndService() {
    VendRateLimiter vend = f.vend(VendRateLimits.builder()
        .limit(Scope.GLOBAL, perMinute("vend-global", 10_000))
        .limit(Scope.SERVICE, perMinute("vend-service", 1000)).build());
    spend(vend, "orders.list", "checkout", 846);
    for (int c = 0; c < 4; c++) {
      spend(vend, "orders.list", "other-" + c, 919);
    }
    f.ticker.advance(Duration.ofSeconds(28));
    VendDecision d = vend.decide(f.call("req_x", "orders.create", "checkout"), CallIdentity.none());

    ObjectNode ext = d.extensionData().orElseThrow();
    assertSameJson(Fixtures.MAPPER.createObjectNode().put("urn", RateLimitExtension.URN).set("data", ext)
        .toString().getBytes(StandardCharsets.UTF_8), """
        { "urn": "urn:vnd:ext:rate-limit", "data": { "scopes": { "global": { "limit": 10000, "used": 4523, "remaining": 5477, "window": { "value": 1, "unit": "minute" }, "resets_in": { "value": 32, "unit": "second" } }, "service": { "limit": 1000, "used": 847, "remaining": 153, "window": { "value": 1, "unit": "minute" }, "resets_in": { "value": 32, "unit": "second" } } } }}
        """);
  }

  @Test
  void multipleScopes_example_globalServiceFunction() {
    VendRateLimiter vend = f.vend(VendRateLimits.builder()
        .limit(Scope.GLOBAL, perMinute("vend-global", 10_000))
        .limit(Scope.SERVICE, perMinute("vend-service", 1000))
        .limit(Scope.FUNCTION, "orders.create", perMinute("vend-orders-create", 100)).build());
    spend(vend, "orders.create", "checkout", 44);
    spend(vend, "orders.list", "checkout", 108);
    for (int c = 0; c < 10; c++) {
      spend(vend, "orders.list", "other-" + c, 437);
    }
    f.ticker.advance(Duration.ofSeconds(28));
    VendDecision d = vend.decide(f.call("req_multi", "orders.create", "checkout"), CallIdentity.none());

    assertSameJson(d.decorate(upstream("req_multi", "{\"success\":true}")), """
        { "protocol": { "name": "vend", "version": "0.1.0" }, "id": "req_multi", "result": { "success": true }, "extensions": [ { "urn": "urn:vnd:ext:rate-limit", "data": { "scopes": { "global": { "limit": 10000, "used": 4523, "remaining": 5477, "window": { "value": 1, "unit": "minute" }, "resets_in": { "value": 32, "unit": "second" } }, "service": { "limit": 1000, "used": 153, "remaining": 847, "window": { "value": 1, "unit": "minute" }, "resets_in": { "value": 32, "unit": "second" } }, "function": { "limit": 100, "used": 45, "remaining": 55, "window": { "value": 1, "unit": "minute" }, "resets_in": { "value": 32, "unit": "second" } } } } } ]}
        """);
  }

  @Test
  void discovery_capabilitiesAnsweredLocally() {
    VendRateLimiter vend = f.vend(VendRateLimits.builder()
        .limit(Scope.SERVICE, perMinute("vend-service", 1000))
        .limit(Scope.FUNCTION, "orders.create", perMinute("vend-orders-create", 100))
        .service("orders-api")
        .documentation(URI.create("https://docs.example.com/rate-limits")).build());
    VendRequest caps = f.request("""
        { "protocol": { "name": "vend", "version": "0.1.0" }, "id": "req_caps", "call": { "function": "vend.capabilities", "version": "1", "arguments": {} }}
        """);
    assertThat(caps.isCapabilities()).isTrue();
    VendDecision d = vend.decide(caps, CallIdentity.none());

    assertSameJson(d.successResponse(vend.capabilities()), """
        { "protocol": { "name": "vend", "version": "0.1.0" }, "id": "req_caps", "result": { "service": "orders-api", "extensions": [ { "urn": "urn:vnd:ext:rate-limit", "documentation": "https://docs.example.com/rate-limits" } ], "rate_limits": [ { "scope": "service", "limit": 1000, "window": { "value": 1, "unit": "minute" } }, { "scope": "function", "function": "orders.create", "limit": 100, "window": { "value": 1, "unit": "minute" } } ] }}
        """);
  }
}
