package dev.headroom.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.headroom.http.body.ProblemType;
import dev.headroom.http.body.RefusalFormat;
import dev.headroom.http.body.ServiceErrors;
import dev.headroom.http.headers.ServiceLimitItem;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The HTTP behaviour every Headroom server adapter shows, checked over a real socket: what
 * {@link HttpAdapterSpecCore} checks (fields, refusals, dialects, leases, content bytes, discovery),
 * and here the gateway's behaviour brought to every front end through headroom-http (store failure,
 * escalation, run-time capacity, jitter, fields only near exhaustion, the remaining/reset cap,
 * unlisted routes, vend routes, 404 bodies), and the gateway's route rules every front end's
 * configuration states too (a policy's method condition, counting only failures, a response charge
 * header: {@link SpecRoute#when()}, {@link SpecRoute#counting()}, {@link SpecRoute#chargeHeader()},
 * which each adapter maps into its own configuration).
 *
 * <p>An adapter's test extends this class and implements the hooks of {@link HttpAdapterSpecCore}
 * ({@link #start(SpecFixture)}, {@link #stop()}, {@link #reduceCapacity(String, double)}).
 *
 * <p>Sections cited: draft-ietf-httpapi-ratelimit-headers-09 (draft-09), Graceful Boundaries 1.5
 * (GB), RFC 9457, RFC 9110, the vend rate-limit extension (seed 003).
 */
public abstract class HttpAdapterSpec extends HttpAdapterSpecCore {

  // ---- the gateway's behaviour on every front end, defined once in headroom-http (issue 18, item 4)

  /**
   * A store that cannot decide, on an adapter set to refuse then: 503 with the problem type
   * temporary-reduced-capacity and the Retry-After every front end sends (draft-09 section 5.2;
   * headroom-http {@code ServiceErrors.storeUnavailable}).
   */
  @Test
  void aStoreThatCannotDecideIsTemporaryReducedCapacityWithTheSharedRetryAfter_draft09_section5_2() throws Exception {
    HttpResponse<String> r = get("/spec/fragile");
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(header(r, "Retry-After")).isEqualTo(Long.toString(ServiceErrors.STORE_RETRY_AFTER_SECONDS));
    assertThat(header(r, "Content-Type")).startsWith("application/problem+json");
    assertThat(header(r, "Cache-Control")).isEqualTo(RefusalFormat.CACHE_CONTROL);
    JsonNode b = json(r);
    assertThat(b.path("type").asText()).isEqualTo(ProblemType.TEMPORARY_REDUCED_CAPACITY.uri());
    assertThat(b.path("status").asInt()).isEqualTo(503);
    assertThat(b.path("error").asText()).isEqualTo(ProblemType.TEMPORARY_REDUCED_CAPACITY.error());
    assertThat(b.path("detail").asText()).isEqualTo(ServiceErrors.storeUnavailableDetail(false));
    assertThat(b.path("why").asText()).isEqualTo(ServiceErrors.STORE_UNAVAILABLE_WHY);
    assertThat(b.path("retryAfterSeconds").asLong()).isEqualTo(ServiceErrors.STORE_RETRY_AFTER_SECONDS);
  }

  /**
   * A partition that keeps sending while told to wait is blocked: its {@code threshold}-th refusal
   * inside the wait is 429 abnormal-usage-detected with the block as Retry-After, and the block
   * outlasts the window (draft-09 section 5.3; Graceful Boundaries section 2, "Retry behavior
   * guidance"; headroom-http {@code Escalations}).
   */
  @Test
  void escalationBlocksAPartitionThatKeepsSendingWhileToldToWait_draft09_section5_3() throws Exception {
    long block = SpecFixture.ESCALATION.block().getSeconds();
    assertThat(get("/spec/escalating").statusCode()).isEqualTo(200);
    for (int strike = 0; strike < SpecFixture.ESCALATION.threshold(); strike++) {
      HttpResponse<String> refused = get("/spec/escalating");
      assertThat(refused.statusCode()).as("refusal %d", strike + 1).isEqualTo(429);
      assertThat(json(refused).path("type").asText()).isEqualTo(ProblemType.QUOTA_EXCEEDED.uri());
    }
    HttpResponse<String> escalated = get("/spec/escalating");
    assertThat(escalated.statusCode()).isEqualTo(429);
    assertThat(header(escalated, "Retry-After")).isEqualTo(Long.toString(block));
    assertThat(header(escalated, "Cache-Control")).isEqualTo(RefusalFormat.CACHE_CONTROL);
    JsonNode b = json(escalated);
    assertThat(b.path("type").asText()).isEqualTo(ProblemType.ABNORMAL_USAGE_DETECTED.uri());
    assertThat(b.path("error").asText()).isEqualTo(ProblemType.ABNORMAL_USAGE_DETECTED.error());
    assertThat(b.path("retryAfterSeconds").asLong()).isEqualTo(block);
    assertThat(b.path("violated-policies").get(0).asText()).isEqualTo("escalating");
    assertThat(b.path("why").asText()).isEqualTo(SpecFixture.WHY);
    // a fresh window does not lift the block; the block's end does
    fixture.ticker().advance(SpecFixture.WINDOW);
    HttpResponse<String> blocked = get("/spec/escalating");
    assertThat(blocked.statusCode()).isEqualTo(429);
    assertThat(header(blocked, "Retry-After")).isEqualTo(Long.toString(block - SpecFixture.WINDOW.getSeconds()));
    assertThat(json(blocked).path("type").asText()).isEqualTo(ProblemType.ABNORMAL_USAGE_DETECTED.uri());
    fixture.ticker().advance(SpecFixture.WINDOW.multipliedBy(block / SpecFixture.WINDOW.getSeconds() - 1));
    assertThat(get("/spec/escalating").statusCode()).isEqualTo(200);
  }

  /**
   * Two escalating policies that start blocking one partition with the same refusal: the refusal
   * names the one that blocks longest (its {@code limitId}, its limit), whose block is the
   * Retry-After and the body's {@code retryAfterSeconds}, so the policy named and the wait announced
   * agree (draft-09 section 5.3; decided once for every front end in headroom-enforcement's {@code Gate},
   * where the gateway once named the last policy of the route and the embedded filters the longest
   * block). The longest-blocking policy comes first in the route, so naming the last would fail here.
   */
  @Test
  void twoEscalationsStartedByOneRefusalNameTheLongestBlock_draft09_section5_3() throws Exception {
    long block = SpecFixture.ESCALATION.block().getSeconds();
    assertThat(SpecFixture.SHORT_ESCALATION.block().getSeconds()).isLessThan(block);
    assertThat(get("/spec/escalating-twice").statusCode()).isEqualTo(200);
    for (int strike = 0; strike < SpecFixture.ESCALATION.threshold(); strike++) {
      HttpResponse<String> refused = get("/spec/escalating-twice");
      assertThat(refused.statusCode()).as("refusal %d", strike + 1).isEqualTo(429);
      assertThat(json(refused).path("type").asText()).isEqualTo(ProblemType.QUOTA_EXCEEDED.uri());
    }
    HttpResponse<String> escalated = get("/spec/escalating-twice");
    assertThat(escalated.statusCode()).isEqualTo(429);
    assertThat(header(escalated, "Retry-After")).isEqualTo(Long.toString(block));
    JsonNode b = json(escalated);
    assertThat(b.path("type").asText()).isEqualTo(ProblemType.ABNORMAL_USAGE_DETECTED.uri());
    assertThat(b.path("limitId").asText()).isEqualTo(SpecFixture.ESCALATING_LONG);
    assertThat(b.path("retryAfterSeconds").asLong()).isEqualTo(block);
    assertThat(b.path("violated-policies")).extracting(JsonNode::asText)
        .contains(SpecFixture.ESCALATING_LONG, SpecFixture.ESCALATING_SHORT);
  }

  /**
   * An operator lowers a policy's capacity at run time: the policy is enforced with the reduced
   * quota on the same counters and refuses with 503 temporary-reduced-capacity (draft-09 section
   * 5.2; headroom-http {@code CapacityReductions}); restored, it counts on.
   */
  @Test
  void runTimeCapacityReductionRefusesAsTemporaryReducedCapacity_draft09_section5_2() throws Exception {
    reduceCapacity("reducible", 0.5);
    try {
      HttpResponse<String> first = get("/spec/reducible");
      assertThat(first.statusCode()).isEqualTo(200);
      assertThat(header(first, "RateLimit-Policy")).isEqualTo("\"reducible\";q=2;w=60");
      assertThat(get("/spec/reducible").statusCode()).isEqualTo(200);
      HttpResponse<String> refused = get("/spec/reducible");
      assertThat(refused.statusCode()).isEqualTo(503);
      assertThat(header(refused, "Retry-After")).isEqualTo("60");
      assertThat(header(refused, "Cache-Control")).isEqualTo(RefusalFormat.CACHE_CONTROL);
      JsonNode b = json(refused);
      assertThat(b.path("type").asText()).isEqualTo(ProblemType.TEMPORARY_REDUCED_CAPACITY.uri());
      assertThat(b.path("status").asInt()).isEqualTo(503);
      assertThat(b.path("retryAfterSeconds").asLong()).isEqualTo(60);
      assertThat(b.path("violated-policies").get(0).asText()).isEqualTo("reducible");
    } finally {
      reduceCapacity("reducible", 1);
    }
    HttpResponse<String> restored = get("/spec/reducible");
    assertThat(restored.statusCode()).isEqualTo(200);
    assertThat(header(restored, "RateLimit")).isEqualTo("\"reducible\";r=1;t=60");
  }

  /**
   * Jitter (draft-09 section 8.5): the refusal's Retry-After is the reset plus zero to
   * {@link SpecFixture#JITTER}, and the fields' {@code t} and the body's {@code retryAfterSeconds}
   * say the same number (section 6).
   */
  @Test
  void jitterMovesRetryAfterAndTAndTheBodyAlike_draft09_section8_5() throws Exception {
    assertThat(get("/spec/jitter").statusCode()).isEqualTo(200);
    HttpResponse<String> refused = get("/spec/jitter");
    assertThat(refused.statusCode()).isEqualTo(429);
    long retryAfter = Long.parseLong(header(refused, "Retry-After"));
    assertThat(retryAfter).isBetween(60L, 60L + SpecFixture.JITTER.getSeconds());
    assertThat(limit(fields(refused), "jittered").reset()).hasValue(Duration.ofSeconds(retryAfter));
    JsonNode b = json(refused);
    assertThat(b.path("retryAfterSeconds").asLong()).isEqualTo(retryAfter);
    assertThat(b.path("detail").asText()).contains(retryAfter + " seconds");
  }

  /**
   * The two meanings of {@code t} on one token bucket of 2 a minute (section 4.1.2 of each draft):
   * after two requests, {@code draft-09} says {@code r=0;t=60} (the bucket full again) and
   * {@code ietf}, the default, {@code r=0;t=30} (draft-10 and -11: the next token); the third is
   * refused with Retry-After 30, and {@code t} is that same moment in both (draft-09 section 6;
   * draft-10 and -11 section 6 let Retry-After be later, never earlier).
   */
  @Test
  void tMeansUntilTheResetUnderDraft09AndUntilMoreQuotaUnderDraft10And11() throws Exception {
    for (String dialect : new String[] {"draft-09", "ietf"}) {
      String path = "/spec/bucket/" + dialect;
      String policy = "bucket-" + dialect;
      assertThat(get(path).statusCode()).isEqualTo(200);
      HttpResponse<String> last = get(path);
      assertThat(last.statusCode()).isEqualTo(200);
      assertThat(header(last, "RateLimit")).as(dialect)
          .isEqualTo("\"" + policy + "\";r=0;t=" + (dialect.equals("ietf") ? 30 : 60));
      HttpResponse<String> refused = get(path);
      assertThat(refused.statusCode()).isEqualTo(429);
      assertThat(header(refused, "Retry-After")).isEqualTo("30");
      assertThat(header(refused, "RateLimit")).as(dialect).isEqualTo("\"" + policy + "\";r=0;t=30");
      assertThat(json(refused).path("retryAfterSeconds").asLong()).isEqualTo(30);
    }
  }

  /**
   * Fields only near exhaustion (draft-09 section 6.2; Graceful Boundaries SC-7, which leaves the
   * exact budget unexposed while it is far from spent): none while utilisation is under
   * {@link SpecFixture#NEAR_EXHAUSTION}, all once it is reached.
   */
  @Test
  void fieldsOnlyNearExhaustion_draft09_section6_2_gb_sc7() throws Exception {
    HttpResponse<String> far = get("/spec/near");
    assertThat(far.statusCode()).isEqualTo(200);
    assertThat(header(far, "RateLimit")).isNull();
    assertThat(header(far, "RateLimit-Policy")).isNull();
    HttpResponse<String> near = get("/spec/near");
    assertThat(near.statusCode()).isEqualTo(200);
    assertThat(header(near, "RateLimit")).isEqualTo("\"near\";r=2;t=60");
  }

  /**
   * The remaining/reset ratio cap (draft-09 sections 6 and 8.5): a token bucket that refills 10 a
   * minute reports a one-token deficit as {@code t=6}; with 9 left, {@code r/t} would invite a burst
   * nine times the nominal rate, so {@code r} is lowered to at most {@code t * q / w} (at least 1).
   */
  @Test
  void remainingToResetRatioIsCappedAtTheNominalThroughput_draft09_sections6_and_8_5() throws Exception {
    HttpResponse<String> r = get("/spec/capped");
    assertThat(r.statusCode()).isEqualTo(200);
    ServiceLimitItem l = limit(fields(r), "capped");
    long t = l.reset().orElseThrow().getSeconds();
    long remaining = l.remaining().getAsLong();
    assertThat(t).isPositive().isLessThan(60);
    assertThat(remaining).isGreaterThanOrEqualTo(1).isLessThan(9);
    assertThat(remaining * 60).as("r * w <= q * t, or r = 1").isLessThanOrEqualTo(Math.max(60, 10 * t));
  }

  /**
   * {@code listed: false} keeps a route out of the discovery document (Graceful Boundaries SC-4:
   * internal routes are not advertised), and it is limited all the same.
   */
  @Test
  void anUnlistedRouteIsLimitedButLeftOutOfDiscovery_gb_sc4() throws Exception {
    JsonNode doc = json(get("/.well-known/limits"));
    doc.path("limits").fields().forEachRemaining(e -> {
      assertThat(e.getKey()).doesNotContain("/spec/hidden");
      assertThat(e.getValue().path("endpoint").asText()).isNotEqualTo("/spec/hidden");
    });
    HttpResponse<String> r = get("/spec/hidden");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(header(r, "RateLimit")).isEqualTo("\"hidden\";r=1;t=60");
  }

  /**
   * A vend route (seed 003, HTTP mapping): a call over its function's quota is answered 429 with
   * a vend envelope whose error is {@code RATE_LIMITED}, retryable, and whose
   * {@code details.retry_after.value} is the Retry-After written; the call declared the extension,
   * so the allowed call's response carries the data of {@code urn:vnd:ext:rate-limit} (inserted
   * into the application's envelope) and the RateLimit fields.
   */
  @Test
  void vendRouteRefusesWithRateLimitedAndRetryAfterEqualToItsDetails_seed003() throws Exception {
    vendRoutesUnsupported().ifPresent(Assumptions::abort);
    String call = "{\"protocol\":{\"name\":\"vend\",\"version\":\"0.1.0\"},\"id\":\"" + key + "\","
        + "\"call\":{\"function\":\"spec.call\",\"version\":\"1\",\"arguments\":{}},"
        + "\"extensions\":[{\"urn\":\"urn:vnd:ext:rate-limit\",\"options\":{}}]}";
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + SpecFixture.VEND_PATH)).timeout(TIMEOUT)
        .header("Content-Type", "application/json").header("X-Vend-Caller", "spec-" + key.substring(2, 10))
        .POST(HttpRequest.BodyPublishers.ofString(call));
    HttpResponse<String> ok = client.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    assertThat(ok.statusCode()).as(ok.body()).isEqualTo(200);
    assertThat(json(ok).path("result").isObject()).as(ok.body()).isTrue();
    JsonNode data = null;
    for (JsonNode e : json(ok).path("extensions")) {
      if (e.path("urn").asText().equals("urn:vnd:ext:rate-limit")) {
        data = e.path("data");
      }
    }
    assertThat(data).as("the extension data in %s", ok.body()).isNotNull();
    assertThat(data.path("limit").asLong()).as(ok.body()).isEqualTo(1);
    assertThat(data.path("remaining").asLong()).as(ok.body()).isZero();
    assertThat(header(ok, "RateLimit")).as("the RateLimit fields of an allowed call").isNotNull();
    HttpResponse<String> refused = client.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    assertThat(refused.statusCode()).as(refused.body()).isEqualTo(429);
    JsonNode error = json(refused).at("/errors/0");
    assertThat(error.path("code").asText()).isEqualTo("RATE_LIMITED");
    assertThat(error.path("retryable").asBoolean()).isTrue();
    assertThat(header(refused, "Retry-After")).isEqualTo(Long.toString(error.at("/details/retry_after/value").asLong()));
  }

  // ---- the gateway's route rules on every front end, stated in each one's configuration (issue 31)

  /**
   * A policy applied only {@code when} its condition holds (the gateway's
   * {@code policies.NAME.when.methods}): {@code when-writes} decides POSTs only, so GETs are
   * neither counted nor refused by it and their fields name only {@code when-every}; the second
   * POST is refused by it (draft-09 section 3: a policy is what the server applies to a request;
   * section 4: the fields list the policies that applied). Were the condition ignored, the second
   * GET would be refused.
   */
  @Test
  void aPolicyAppliesOnlyWhenItsConditionHolds_draft09_sections3_and_4() throws Exception {
    for (int i = 0; i < 2; i++) {
      HttpResponse<String> read = get("/spec/when");
      assertThat(read.statusCode()).as("GET %d", i + 1).isEqualTo(200);
      assertThat(header(read, "RateLimit")).isEqualTo("\"when-every\";r=" + (4 - i) + ";t=60");
    }
    HttpResponse<String> write = send("POST", "/spec/when");
    assertThat(write.statusCode()).isEqualTo(200);
    assertThat(limit(fields(write), "when-writes").remaining()).hasValue(0);
    assertThat(limit(fields(write), "when-every").remaining()).hasValue(2);
    HttpResponse<String> refused = send("POST", "/spec/when");
    assertThat(refused.statusCode()).isEqualTo(429);
    assertThat(json(refused).path("violated-policies")).extracting(JsonNode::asText).containsExactly("when-writes");
    assertThat(get("/spec/when").statusCode()).isEqualTo(200);
  }

  /**
   * A policy counting only failures (the gateway's {@code policies.NAME.count: failures}): each
   * request is counted when decided and given back when its response is below 400, so successes
   * never use the quota of 1 and the first failure does; the next request is refused whatever it
   * would have answered (draft-09 section 5: the quota is what the server counts). Were the rule
   * ignored, the second success would be refused.
   */
  @Test
  void aPolicyCountingOnlyFailuresGivesSuccessesBack_draft09_section5() throws Exception {
    for (int i = 0; i < 2; i++) {
      assertThat(get("/spec/failures?status=200").statusCode()).as("success %d", i + 1).isEqualTo(200);
      fixture.store().await("refund", "failures", partition(), TIMEOUT);
    }
    assertThat(get("/spec/failures?status=404").statusCode()).isEqualTo(404);
    HttpResponse<String> refused = get("/spec/failures?status=200");
    assertThat(refused.statusCode()).isEqualTo(429);
    assertThat(json(refused).path("violated-policies").get(0).asText()).isEqualTo("failures");
  }

  /**
   * A response charge header (the gateway's {@code cost.chargeHeader}): the units the application
   * states in {@link SpecFixture#CHARGE_HEADER} are charged to the route's requests policy once the
   * response is complete, on top of the request's cost of 1, into debt if need be, which later
   * requests wait out (draft-09 section 5: quota units are what the server says a request costs).
   * Were the header ignored, the second response would say {@code r=8} and nothing would be refused.
   */
  @Test
  void aResponseChargeHeaderChargesTheUnitsItStates_draft09_section5() throws Exception {
    HttpResponse<String> first = get("/spec/charged?charge=6");
    assertThat(first.statusCode()).isEqualTo(200);
    assertThat(header(first, "RateLimit")).isEqualTo("\"charged\";r=9;t=60");
    assertThat(fixture.store().await("charge", "charged", partition(), TIMEOUT).units()).isEqualTo(6);
    HttpResponse<String> second = get("/spec/charged");
    assertThat(second.statusCode()).isEqualTo(200);
    assertThat(header(second, "RateLimit")).isEqualTo("\"charged\";r=2;t=60");
    assertThat(get("/spec/charged?charge=" + SpecFixture.MAX_CHARGE).statusCode()).isEqualTo(200);
    assertThat(fixture.store().await("charge", "charged", partition(), TIMEOUT).units()).isEqualTo(SpecFixture.MAX_CHARGE);
    HttpResponse<String> refused = get("/spec/charged");
    assertThat(refused.statusCode()).isEqualTo(429);
    assertThat(json(refused).path("violated-policies").get(0).asText()).isEqualTo("charged");
  }

  /**
   * The service's own errors are Graceful Boundaries bodies too (section 6): a path nothing serves
   * is 404 with {@code error}, {@code detail} and {@code why} (the gateway's not_found; the
   * filter's opt-in error bodies; the starter's error controller), never cached.
   */
  @Test
  void aPathNothingServesIs404WithErrorDetailAndWhy_gb_section6() throws Exception {
    HttpResponse<String> r = get("/spec/nothing-here", "Accept", "application/json");
    assertThat(r.statusCode()).isEqualTo(404);
    assertThat(header(r, "Content-Type")).startsWith("application/");
    assertThat(header(r, "Cache-Control")).isEqualTo(RefusalFormat.CACHE_CONTROL);
    JsonNode b = json(r);
    assertThat(b.path("error").asText()).isEqualTo("not_found");
    assertThat(b.path("detail").asText()).contains("/spec/nothing-here");
    assertThat(b.path("why").asText()).isNotBlank();
  }
}
