package dev.headroom.vend;

import static dev.headroom.vend.Fixtures.perMinute;
import static dev.headroom.vend.Fixtures.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.vend.format.Scope;
import dev.headroom.vend.format.VendError;
import dev.headroom.vend.format.VendRequest;
import dev.headroom.vend.format.VendRequestException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Seed 003 "Behavior" and "Rate Limit Scopes", through {@link VendRateLimiter#decide}. */
class VendRateLimiterTest {

  private final Fixtures f = new Fixtures();

  private VendRequest plain(String id, String function, String caller) {
    return f.request("{\"protocol\":{\"name\":\"vend\",\"version\":\"0.1.0\"},\"id\":\"" + id + "\","
        + "\"call\":{\"function\":\"" + function + "\"}"
        + (caller == null ? "" : ",\"context\":{\"caller\":\"" + caller + "\"}") + "}");
  }

  @Test
  void explicit_aRequestWithoutTheExtensionGetsNoExtensionData_butIsStillLimited() {
    VendRateLimiter vend = f.vend(VendRateLimits.builder().limit(Scope.SERVICE, perMinute("svc", 1)).build());
    VendDecision first = vend.decide(plain("a", "orders.create", "checkout"), CallIdentity.none());
    assertThat(first.allowed()).isTrue();
    assertThat(first.extensionData()).isEmpty();
    byte[] upstream = utf8("{\"protocol\":{\"name\":\"vend\",\"version\":\"0.1.0\"},\"id\":\"a\",\"result\":{}}");
    assertThat(first.decorate(upstream)).isSameAs(upstream);
    assertThat(Fixtures.tree(first.successResponse(Fixtures.tree("{}"))).has("extensions")).isFalse();

    VendDecision second = vend.decide(plain("b", "orders.create", "checkout"), CallIdentity.none());
    assertThat(second.allowed()).isFalse();
    assertThat(second.httpStatus()).isEqualTo(429);
    JsonNode body = Fixtures.tree(second.errorResponse());
    assertThat(body.get("id").asText()).isEqualTo("b");
    assertThat(body.at("/errors/0/code").asText()).isEqualTo("RATE_LIMITED");
    assertThat(body.at("/errors/0/retryable").asBoolean()).isTrue();
    assertThat(body.has("extensions")).isFalse();
  }

  @Test
  void serviceScope_contextCallerWinsOverTheHeader_headerUsedWhenTheEnvelopeNamesNone() {
    VendRateLimiter vend = f.vend(VendRateLimits.builder().limit(Scope.SERVICE, perMinute("svc", 1)).build());
    VendDecision a = vend.decide(f.call("1", "orders.create", "checkout"), CallIdentity.of("billing", null));
    assertThat(a.caller()).contains("checkout");
    // checkout is spent; billing (header only) is not.
    assertThat(vend.decide(f.call("2", "orders.create", null), CallIdentity.of("billing", null)).allowed()).isTrue();
    assertThat(vend.decide(f.call("3", "orders.create", null), CallIdentity.of("checkout", null)).allowed()).isFalse();
    assertThat(vend.decide(f.call("4", "orders.create", "billing"), CallIdentity.of("other", null)).allowed()).isFalse();
  }

  @Test
  void serviceScope_anonymousCallersShareOnePartition() {
    VendRateLimiter vend = f.vend(VendRateLimits.builder().limit(Scope.SERVICE, perMinute("svc", 2)).build());
    assertThat(vend.decide(f.call("1", "a.b", null), CallIdentity.none()).allowed()).isTrue();
    assertThat(vend.decide(f.call("2", "a.b", null), CallIdentity.none()).allowed()).isTrue();
    VendDecision third = vend.decide(f.call("3", "a.b", null), CallIdentity.none());
    assertThat(third.allowed()).isFalse();
    assertThat(third.caller()).isEmpty();
    assertThat(vend.decide(f.call("4", "a.b", "named"), CallIdentity.none()).allowed()).isTrue();
  }

  @Test
  void serviceScope_aBadCallerHeaderIsAnInvalidRequestNamingTheHeader() {
    VendRateLimiter vend = f.vend(VendRateLimits.builder().limit(Scope.SERVICE, perMinute("svc", 2)).build());
    assertThatThrownBy(() -> vend.decide(f.call("h1", "a.b", null), CallIdentity.of("bad\u0001name", null)))
        .isInstanceOfSatisfying(VendRequestException.class, e -> {
          assertThat(e.error().code()).isEqualTo(VendError.INVALID_REQUEST);
          assertThat(e.getMessage()).startsWith("X-Vend-Caller header: expected 1 to 256 printable characters")
              .contains("bad\\u0001name");
          assertThat(e.id()).contains("h1");
        });
    // Ignored when the envelope names the caller.
    assertThat(vend.decide(f.call("h2", "a.b", "ok"), CallIdentity.of("", null)).allowed()).isTrue();
  }

  @Test
  void allOrNothing_aCallRefusedByTheFunctionScopeConsumesNothingFromTheServiceScope() {
    VendRateLimiter vend = f.vend(VendRateLimits.builder()
        .limit(Scope.SERVICE, perMinute("svc", 10))
        .limit(Scope.FUNCTION, "orders.create", perMinute("fn", 1)).build());
    assertThat(vend.decide(f.call("1", "orders.create", "c"), CallIdentity.none()).allowed()).isTrue();
    for (int i = 0; i < 3; i++) {
      VendDecision refused = vend.decide(f.call("r" + i, "orders.create", "c"), CallIdentity.none());
      assertThat(refused.allowed()).isFalse();
      assertThat(refused.error().orElseThrow().details().orElseThrow().get("scope").asText()).isEqualTo("function");
    }
    VendDecision other = vend.decide(f.call("2", "orders.list", "c"), CallIdentity.none());
    assertThat(other.scopes()).singleElement().satisfies(s -> assertThat(s.used()).isEqualTo(2));
  }

  @Test
  void refusal_keepsExtensionDataForEveryScope_detailsNameTheViolatedScope_retryAfterEqualsTheHeaderValue() {
    VendRateLimiter vend = f.vend(VendRateLimits.builder()
        .limit(Scope.GLOBAL, perMinute("all", 100))
        .limit(Scope.USER, perMinute("per-user", 2)).build());
    vend.decide(f.call("1", "a.b", null), CallIdentity.of(null, "u-1"));
    vend.decide(f.call("2", "a.b", null), CallIdentity.of(null, "u-1"));
    f.ticker.advance(Duration.ofMillis(50_500));
    VendDecision d = vend.decide(f.call("3", "a.b", null), CallIdentity.of(null, "u-1"));

    assertThat(d.allowed()).isFalse();
    assertThat(d.user()).contains("u-1");
    assertThat(d.retryAfterSeconds()).isEqualTo(10); // 9.5 s left in the minute, rounded up
    JsonNode body = Fixtures.tree(d.errorResponse());
    assertThat(body.at("/errors/0/details")).isEqualTo(Fixtures.tree(
        "{\"limit\":2,\"used\":2,\"window\":{\"value\":1,\"unit\":\"minute\"},"
            + "\"retry_after\":{\"value\":10,\"unit\":\"second\"},\"scope\":\"user\",\"function\":\"a.b\"}"));
    assertThat(body.at("/extensions/0/data/scopes/global/used").asLong()).isEqualTo(2);
    assertThat(body.at("/extensions/0/data/scopes/user")).isEqualTo(Fixtures.tree(
        "{\"limit\":2,\"used\":2,\"remaining\":0,\"window\":{\"value\":1,\"unit\":\"minute\"},"
            + "\"resets_in\":{\"value\":10,\"unit\":\"second\"}}"));
    // Another user is not affected.
    assertThat(vend.decide(f.call("4", "a.b", null), CallIdentity.of(null, "u-2")).allowed()).isTrue();
  }

  @Test
  void warning_isDueStrictlyUnderTenPercentRemaining_andOnTheLastAllowedCall() {
    VendRateLimiter vend = f.vend(VendRateLimits.builder().limit(Scope.GLOBAL, perMinute("g", 20)).build());
    for (int used = 1; used <= 20; used++) {
      ObjectNode data = vend.decide(f.call("w" + used, "a.b", null), CallIdentity.none()).extensionData().orElseThrow();
      long remaining = 20 - used;
      assertThat(data.get("remaining").asLong()).isEqualTo(remaining);
      assertThat(data.has("warning")).as("remaining %d of 20", remaining).isEqualTo(remaining < 2);
    }
    ObjectNode refused = vend.decide(f.call("w21", "a.b", null), CallIdentity.none()).extensionData().orElseThrow();
    assertThat(refused.has("warning")).isFalse(); // the RATE_LIMITED error says it
  }

  @Test
  void optionsScope_reportsOnlyTheRequestedScope_whenItApplies() {
    VendRateLimiter vend = f.vend(VendRateLimits.builder()
        .limit(Scope.GLOBAL, perMinute("g", 100))
        .limit(Scope.SERVICE, perMinute("s", 10)).build());
    String body = "{\"protocol\":{\"name\":\"vend\",\"version\":\"0.1.0\"},\"id\":\"o\",\"call\":{\"function\":\"a.b\"},"
        + "\"extensions\":[{\"urn\":\"urn:vnd:ext:rate-limit\",\"options\":{\"scope\":\"%s\"}}]}";
    ObjectNode service = vend.decide(f.request(String.format(body, "service")), CallIdentity.none()).extensionData().orElseThrow();
    assertThat(service.get("scope").asText()).isEqualTo("service");
    assertThat(service.get("limit").asLong()).isEqualTo(10);
    ObjectNode user = vend.decide(f.request(String.format(body, "user")), CallIdentity.none()).extensionData().orElseThrow();
    assertThat(user.get("scopes").size()).isEqualTo(2); // user does not apply: every scope is reported
  }

  @Test
  void perFunctionLimit_replacesTheScopeDefault_andCountsEachFunctionApart() {
    QuotaPolicy shared = perMinute("per-fn", 1);
    VendRateLimiter vend = f.vend(VendRateLimits.builder()
        .limit(Scope.SERVICE, perMinute("svc", 100))
        .limit(Scope.SERVICE, "orders.create", shared)
        .limit(Scope.SERVICE, "orders.delete", shared).build());
    assertThat(vend.decide(f.call("1", "orders.create", "c"), CallIdentity.none()).allowed()).isTrue();
    assertThat(vend.decide(f.call("2", "orders.delete", "c"), CallIdentity.none()).allowed()).isTrue();
    assertThat(vend.decide(f.call("3", "orders.create", "c"), CallIdentity.none()).allowed()).isFalse();
    VendDecision list = vend.decide(f.call("4", "orders.list", "c"), CallIdentity.none());
    assertThat(list.scopes()).singleElement().satisfies(s -> {
      assertThat(s.limit()).isEqualTo(100);
      assertThat(s.scopeLimit().function()).isEmpty();
    });
  }

  @Test
  void noApplicableLimit_allowsWithEmptyScopes() {
    VendRateLimiter vend = f.vend(VendRateLimits.builder()
        .limit(Scope.FUNCTION, "orders.create", perMinute("fn", 1)).build());
    VendDecision d = vend.decide(f.call("1", "orders.list", null), CallIdentity.none());
    assertThat(d.allowed()).isTrue();
    assertThat(d.decision()).isEmpty();
    assertThat(d.extensionData()).contains((ObjectNode) Fixtures.tree("{\"scopes\":{}}"));
    assertThatThrownBy(d::errorResponse).isInstanceOf(IllegalStateException.class).hasMessageContaining("was allowed");
  }

  @Test
  void decideAsync_givesTheSameAnswer() throws Exception {
    VendRateLimiter vend = f.vend(VendRateLimits.builder().limit(Scope.FUNCTION, perMinute("fn", 1)).build());
    assertThat(vend.decideAsync(f.call("1", "a.b", null), CallIdentity.none()).toCompletableFuture().get().allowed()).isTrue();
    VendDecision refused = vend.decideAsync(f.call("2", "a.b", null), CallIdentity.none()).toCompletableFuture().get();
    assertThat(refused.allowed()).isFalse();
    assertThat(refused.retryAfterSeconds()).isEqualTo(60);
    assertThat(vend.decideAsync(f.call("3", "a.b", null), CallIdentity.of("\n", null)).toCompletableFuture())
        .isCompletedExceptionally();
  }

  @Test
  void errorResponse_withALongerRetryAfter_isTheBodyForAJitteredHeader_neverAShorterOne() {
    VendRateLimiter vend = f.vend(VendRateLimits.builder().limit(Scope.FUNCTION, perMinute("fn", 1)).build());
    vend.decide(f.call("1", "a.b", null), CallIdentity.none());
    f.ticker.advance(Duration.ofSeconds(30));
    VendDecision d = vend.decide(f.call("2", "a.b", null), CallIdentity.none());
    assertThat(d.retryAfterSeconds()).isEqualTo(30);
    assertThat(Fixtures.tree(d.errorResponse(Duration.ofSeconds(32))).at("/errors/0/details/retry_after/value").asLong())
        .isEqualTo(32);
    assertThatThrownBy(() -> d.errorResponse(Duration.ofSeconds(29)))
        .hasMessage("retryAfter: expected at least 30 seconds (the decision's), got PT29S");
  }

  @Test
  void theWindowMovesWithTheInjectedClock() {
    VendRateLimiter vend = f.vend(VendRateLimits.builder().limit(Scope.FUNCTION, perMinute("fn", 1)).build());
    assertThat(vend.decide(f.call("1", "a.b", null), CallIdentity.none()).allowed()).isTrue();
    assertThat(vend.decide(f.call("2", "a.b", null), CallIdentity.none()).allowed()).isFalse();
    f.ticker.advance(Duration.ofSeconds(60));
    assertThat(vend.decide(f.call("3", "a.b", null), CallIdentity.none()).allowed()).isTrue();
  }

  @Test
  void configuration_refusesWhatTheExtensionCannotReport() {
    assertThatThrownBy(() -> VendRateLimits.builder().limit(Scope.GLOBAL, QuotaPolicy.builder("bytes").quota(10)
        .window(Duration.ofMinutes(1)).unit(QuotaUnit.CONTENT_BYTES).build()))
        .hasMessage("limit: policy 'bytes' of scope global: unit: expected requests (the extension reports requests), got content-bytes");
    assertThatThrownBy(() -> VendRateLimits.builder().limit(Scope.FUNCTION, "create", perMinute("f", 1)))
        .hasMessageStartingWith("limit: function: expected a function name in <service>.<action> dot form")
        .hasMessageContaining("\"create\"");
    assertThatThrownBy(() -> VendRateLimits.builder().limit(Scope.GLOBAL, perMinute("a", 1)).limit(Scope.GLOBAL, perMinute("b", 1)))
        .hasMessage("limit: scope global already has a policy for every function ('a'), got a second one ('b')");
    assertThatThrownBy(() -> VendRateLimiter.builder(VendRateLimits.builder().build()).build())
        .hasMessage("limiter: expected a QuotaLimiter, got nothing (limiter is required)");
    assertThatThrownBy(() -> CallIdentity.of(null, "")).hasMessageStartingWith("user: expected 1 to 256 printable characters");
  }
}
