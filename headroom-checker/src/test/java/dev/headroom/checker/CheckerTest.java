package dev.headroom.checker;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.ManualTicker;
import dev.headroom.client.TestServer;
import dev.headroom.http.headers.HeaderDialect;
import java.net.http.HttpClient;
import java.util.EnumSet;
import java.util.List;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The checker against real loopback services: a well-behaved one in every dialect, and services
 * broken on purpose, each caught with the right rule and message.
 */
class CheckerTest {

  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private final ManualTicker ticker = ManualTicker.atFixedInstant();

  private Report check(Service service, int probe) throws Exception {
    try (TestServer server = service.start(ticker)) {
      Report report = Checker.builder(HTTP).ticker(ticker).probe(probe).build().check(server.uri("/"));
      // --probe N is a bound: never more than N requests to the probed endpoint, stopping at the first refusal.
      long probed = server.log().stream().filter(l -> l.request().path().equals("/api/items")).count();
      assertThat(probed).isLessThanOrEqualTo(1 + probe);
      return report;
    }
  }

  private static List<Finding> matching(Report r, Finding.Severity severity, String rule, Predicate<String> message) {
    return r.findings().stream().filter(f -> f.severity() == severity && f.rule().equals(rule) && message.test(f.message())).toList();
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(HeaderDialect.class)
  void aWellBehavedServiceIsLevel4InEveryDialect(HeaderDialect dialect) throws Exception {
    Report r = check(new Service().dialect(dialect), 10);
    assertThat(r.findings(Finding.Severity.VIOLATION)).as(r.toText()).isEmpty();
    assertThat(r.level()).as(r.toText()).isEqualTo(Level.LEVEL_4);
    // draft-09 and draft-10/-11 write the same fields: a reader reports both as ietf.
    HeaderDialect read = dialect == HeaderDialect.DRAFT_09 ? HeaderDialect.IETF : dialect;
    assertThat(r.dialects()).contains(read);
    assertThat(r.declared()).contains("level-4");
    assertThat(r.requirements()).allSatisfy(q -> assertThat(q.status()).isEqualTo(Requirement.Status.PASS));
    // Three allowed, the fourth refused: the probe stopped there.
    assertThat(r.requirements().get(1).evidence().get(0)).contains("refused after 3 of at most 10");
    assertThat(r.toText()).contains("Graceful Boundaries level: 4 (declared: level-4)", "RateLimit dialects: " + read.token());
  }

  /** Section 1 "endpoint: path pattern": a pattern outside the one grammar is reported, not fatal. */
  @Test
  void anEndpointPatternNoClientCanReadIsAWarning() throws Exception {
    String doc = Service.DOCUMENT.replace("\"endpoint\":\"/api/orders\"", "\"endpoint\":\"/api/**/orders\"");
    Report r = check(new Service().document(doc), 10);
    assertThat(matching(r, Finding.Severity.WARNING, "GB-1",
        m -> m.startsWith("limits.orders.endpoint: path template '/api/**/orders': at position 5: expected ** only")))
        .as(r.toText()).hasSize(1);
    assertThat(r.level()).as(r.toText()).isEqualTo(Level.LEVEL_4);
  }

  @Test
  void withoutAProbeRefusalsAreUnverifiedAndTheLevelStopsAt2() throws Exception {
    Report r = check(new Service(), 0);
    assertThat(r.level()).isEqualTo(Level.LEVEL_2);
    assertThat(r.requirements().get(1).status()).isEqualTo(Requirement.Status.UNVERIFIED);
    assertThat(r.requirements().get(3).status()).isEqualTo(Requirement.Status.UNVERIFIED);
    assertThat(r.findings()).anySatisfy(f -> assertThat(f.message()).contains("declares level-4 but validates as level 2"));
  }

  @Test
  void aRefusalWithoutWhyIsCaught() throws Exception {
    Report r = check(new Service().refusal(b -> b.replaceAll(",\"why\":\"[^\"]*\"", "")), 10);
    assertThat(matching(r, Finding.Severity.VIOLATION, "GB-2", m -> m.startsWith("why: missing"))).hasSize(1);
    assertThat(matching(r, Finding.Severity.VIOLATION, "SCHEMA", m -> m.contains("why"))).isNotEmpty();
    assertThat(r.level()).isEqualTo(Level.LEVEL_0);
  }

  @Test
  void aWhyThatRestatesTheErrorIsCaught() throws Exception {
    Report r = check(new Service().refusal(b -> b.replace("Limits keep the catalogue available for everyone.", "Rate limit exceeded.")), 10);
    assertThat(matching(r, Finding.Severity.VIOLATION, "GB-2", m -> m.contains("restates the error"))).hasSize(1);
    assertThat(r.level()).isEqualTo(Level.LEVEL_0);
  }

  @Test
  void badStructuredFieldSyntaxIsCaught() throws Exception {
    Report r = check(new Service().success(rep -> {
      rep.headers.put("RateLimit", List.of("\"default\";r=2;t=60;"));
      return rep;
    }), 10);
    assertThat(matching(r, Finding.Severity.VIOLATION, "IETF-SYNTAX", m -> m.startsWith("RateLimit: "))).isNotEmpty();
    assertThat(matching(r, Finding.Severity.VIOLATION, "IETF-SYNTAX", m -> true).get(0).reference())
        .contains("RFC 9651 section 4.2");
    assertThat(r.level()).isEqualTo(Level.LEVEL_3);
    assertThat(r.requirements().get(4).status()).isEqualTo(Requirement.Status.FAIL);
  }

  @Test
  void remainingAboveTheQuotaIsCaught() throws Exception {
    Report r = check(new Service().success(rep -> {
      rep.headers.put("RateLimit", List.of("\"default\";r=10;t=60"));
      return rep;
    }), 10);
    assertThat(matching(r, Finding.Severity.WARNING, "IETF-REMAINING_ABOVE_QUOTA", m -> m.contains("r=10 exceeds q=3"))).isNotEmpty();
  }

  @Test
  void aResetThatDisagreesWithRetryAfterIsCaught() throws Exception {
    Report r = check(new Service().success(rep -> rep.header("Retry-After", "5")), 10);
    assertThat(matching(r, Finding.Severity.WARNING, "IETF-RESET_DISAGREES_WITH_RETRY_AFTER", m -> m.contains("Retry-After 5s")))
        .isNotEmpty();
  }

  @Test
  void aPolicyWithQuotaLeftMayKeepItsOwnResetNextToRetryAfter() throws Exception {
    // Like the gateway's demo: the exhausted policy agrees with Retry-After, another policy with
    // quota left reports its own (longer) reset: a note, not a warning.
    try (TestServer server = new TestServer(ticker, req -> req.path().equals("/api/items")
        ? TestServer.Reply.of(429).body("application/problem+json", String.format(Service.REFUSAL, 2, 2))
            .header("Retry-After", "2").header("RateLimit-Policy", "\"burst\";q=5;w=10, \"daily\";q=1000;w=86400")
            .header("RateLimit", "\"burst\";r=0;t=2, \"daily\";r=995;t=43101")
        : TestServer.Reply.of(404).body("application/problem+json", Service.NOT_FOUND))) {
      Report r = Checker.builder(HTTP).ticker(ticker).probe(1).probeEndpoint("/api/items").build().check(server.uri("/"));
      assertThat(matching(r, Finding.Severity.NOTE, "IETF-RESET_DISAGREES_WITH_RETRY_AFTER", m -> m.contains("'daily'"))).hasSize(1);
      assertThat(r.findings()).noneMatch(f -> f.rule().equals("IETF-RESET_DISAGREES_WITH_RETRY_AFTER")
          && f.severity() != Finding.Severity.NOTE);
    }
  }

  /** A refusal whose RateLimit field is {@code rateLimit}, with Retry-After {@code retryAfter} seconds. */
  private Report checkRefusal(String rateLimit, int retryAfter) throws Exception {
    try (TestServer server = new TestServer(ticker, req -> req.path().equals("/api/items")
        ? TestServer.Reply.of(429).body("application/problem+json", String.format(Service.REFUSAL, retryAfter, retryAfter))
            .header("Retry-After", Integer.toString(retryAfter)).header("RateLimit-Policy", "\"tokens\";q=10;w=60")
            .header("RateLimit", rateLimit)
        : TestServer.Reply.of(404).body("application/problem+json", Service.NOT_FOUND))) {
      return Checker.builder(HTTP).ticker(ticker).probe(1).probeEndpoint("/api/items").build().check(server.uri("/"));
    }
  }

  @Test
  void aDraft10ResetEarlierThanRetryAfterIsJudgedByDraft10_notADraft09Violation() throws Exception {
    // A cost-weighted refusal: two units left, the next in 1 s, the five asked for in 3 s.
    Report r = checkRefusal("\"tokens\";r=2;t=1", 3);
    assertThat(matching(r, Finding.Severity.NOTE, "IETF-RESET_BEFORE_RETRY_AFTER", m -> m.contains("judged by draft-10 and -11")))
        .hasSize(1);
    assertThat(matching(r, Finding.Severity.NOTE, "IETF-DRAFT", m -> m.startsWith("judged by draft-10 and -11"))).hasSize(1);
    assertThat(r.findings()).noneMatch(f -> f.rule().startsWith("IETF-") && f.severity() != Finding.Severity.NOTE);
  }

  @Test
  void aDraft09ResetAtRetryAfterIsNoDraft11ViolationEither() throws Exception {
    Report r = checkRefusal("\"tokens\";r=0;t=30", 30);
    assertThat(matching(r, Finding.Severity.NOTE, "IETF-DRAFT", m -> m.startsWith("judged by draft-09 to -11 alike"))).hasSize(1);
    assertThat(r.findings()).noneMatch(f -> f.rule().startsWith("IETF-RESET"));
    assertThat(r.findings()).noneMatch(f -> f.rule().startsWith("IETF-") && f.severity() != Finding.Severity.NOTE);
  }

  @Test
  void aResetLaterThanRetryAfterBreaksEveryDraft() throws Exception {
    Report r = checkRefusal("\"tokens\";r=0;t=9", 3);
    assertThat(matching(r, Finding.Severity.WARNING, "IETF-RESET_DISAGREES_WITH_RETRY_AFTER", m -> m.contains("reset 9s"))).hasSize(1);
  }

  @Test
  void theEditorsDraftSpellingIsReadAndJudgedByItself() throws Exception {
    Report r = checkRefusal("\"tokens\";a=2;w=1;c=0", 3);
    assertThat(matching(r, Finding.Severity.NOTE, "IETF-DRAFT", m -> m.startsWith("judged by the editor's draft after draft-11")))
        .hasSize(1);
    assertThat(r.findings()).noneMatch(f -> f.rule().startsWith("IETF-") && f.severity() != Finding.Severity.NOTE);
  }

  @Test
  void crossOriginGuidanceIsCaughtSc6() throws Exception {
    Report r = check(new Service().refusal(b -> b.replace("\"/api/items/cached\"", "\"https://elsewhere.example/api/items\"")), 10);
    assertThat(matching(r, Finding.Severity.VIOLATION, "SC-6",
        m -> m.contains("alternativeEndpoint 'https://elsewhere.example/api/items' is cross-origin"))).hasSize(1);
    assertThat(r.level()).isEqualTo(Level.LEVEL_0);
  }

  @Test
  void guidanceLeadingToADeadEndIsCaught() throws Exception {
    Report r = check(new Service().refusal(b -> b.replace("/api/items/cached", "/api/nowhere")), 10);
    assertThat(matching(r, Finding.Severity.VIOLATION, "GB-3", m -> m.contains("'/api/nowhere' leads to 404"))).hasSize(1);
    assertThat(r.level()).isEqualTo(Level.LEVEL_2);
  }

  @Test
  void aRefusalWithoutGuidanceStopsAtLevel2() throws Exception {
    Report r = check(new Service().refusal(b -> b.replace(",\"alternativeEndpoint\":\"/api/items/cached\"", "")), 10);
    assertThat(r.level()).isEqualTo(Level.LEVEL_2);
    assertThat(r.requirements().get(3).evidence()).anySatisfy(e -> assertThat(e).contains("no cachedResultUrl"));
  }

  @Test
  void noDiscoveryIsCaughtAndTheLevelStopsAt1() throws Exception {
    Report r = check(new Service().withoutDiscovery(), 10);
    assertThat(matching(r, Finding.Severity.WARNING, "GB-1", m -> m.startsWith("no limits discovery document at /.well-known/limits or /api/limits")))
        .hasSize(1);
    assertThat(r.level()).isEqualTo(Level.LEVEL_1);
    assertThat(r.declared()).isEmpty();
  }

  @Test
  void anInvalidDiscoveryDocumentIsCaught() throws Exception {
    String doc = Service.DOCUMENT.replace("\"description\":\"An item catalogue.\",", "")
        .replace("\"conformance\":\"level-4\"", "\"conformance\":\"level-4\",\"changelog\":\"https://elsewhere.example/changes\"");
    Report r = check(new Service().document(doc), 10);
    assertThat(matching(r, Finding.Severity.VIOLATION, "SCHEMA", m -> m.contains("description"))).isNotEmpty();
    assertThat(matching(r, Finding.Severity.VIOLATION, "SC-6", m -> m.startsWith("changelog 'https://elsewhere.example/changes'"))).hasSize(1);
    assertThat(r.level()).isEqualTo(Level.LEVEL_1);
  }

  @Test
  void bare404sAndAnHtml429AreLevel0() throws Exception {
    try (TestServer server = new TestServer(ticker, req -> req.path().equals("/api/items")
        ? TestServer.Reply.of(429).body("text/html", "<p>Too many requests</p>")
        : TestServer.Reply.of(404).body("text/plain", "Not Found"))) {
      Report r = Checker.builder(HTTP).ticker(ticker).probe(3).probeEndpoint("/api/items").build().check(server.uri("/"));
      assertThat(r.level()).isEqualTo(Level.LEVEL_0);
      assertThat(matching(r, Finding.Severity.VIOLATION, "GB-2",
          m -> m.contains("neither Retry-After nor <meta name=\"retry-after\">"))).hasSize(1);
      assertThat(matching(r, Finding.Severity.VIOLATION, "GB-2", m -> m.equals("no Retry-After"))).hasSize(1);
      assertThat(server.log().stream().filter(l -> l.request().path().equals("/api/items"))).hasSize(1);
    }
  }

  @Test
  void aStaticSiteDeclaringNotApplicableIsNa() throws Exception {
    String doc = "{\"service\":\"Blog\",\"description\":\"A personal blog.\",\"conformance\":\"not-applicable\",\"limits\":{}}";
    try (TestServer server = new TestServer(ticker, req -> req.path().equals("/.well-known/limits")
        ? TestServer.Reply.of(200).json(doc).header("Cache-Control", "s-maxage=600")
        : TestServer.Reply.of(200).body("text/html", "<h1>Blog</h1>"))) {
      Report r = Checker.builder(HTTP).ticker(ticker).build().check(server.uri("/"));
      assertThat(r.level()).isEqualTo(Level.NOT_APPLICABLE);
    }
  }

  @Test
  void theProbeNeverExceedsItsBound() throws Exception {
    try (TestServer server = new Service().start(ticker)) {
      Checker.builder(HTTP).ticker(ticker).probe(2).build().check(server.uri("/"));
      // One request while visiting the listed endpoints, then the two probe requests, none refused.
      assertThat(server.log().stream().filter(l -> l.request().path().equals("/api/items"))).hasSize(3);
      assertThat(server.count(429)).isZero();
    }
  }

  @Test
  void theJsonReportCarriesLevelRequirementsAndFindings() throws Exception {
    Report r = check(new Service().dialect(HeaderDialect.DRAFT_07), 10);
    JsonNode json = new ObjectMapper().readTree(r.toJson());
    assertThat(json.get("level").asText()).isEqualTo("4");
    assertThat(json.get("dialects").get(0).asText()).isEqualTo("draft-07");
    assertThat(json.get("requirements")).hasSize(5);
    assertThat(Stream.of(Level.values()).map(Level::label)).containsExactly("N/A", "0", "1", "2", "3", "4");
    assertThat(EnumSet.allOf(HeaderDialect.class)).hasSize(7);
  }

  // express-rate-limit's draft-8 mode puts pk on the policy only (draft-09 sections 4.1.4, 5.1.3 make it optional on both).
  @Test
  void aPolicyWithPkAndALimitWithoutOneIsNoUnknownPolicy() throws Exception {
    Report r = check(new Service().success(reply -> {
      reply.headers.remove("RateLimit");
      reply.headers.remove("RateLimit-Policy");
      return reply.header("RateLimit-Policy", "\"3-in-60sec\"; q=3; w=60; pk=:1pc3Rm3mFm7G9qRk:")
          .header("RateLimit", "\"3-in-60sec\"; r=2; t=60");
    }), 0);
    assertThat(r.findings()).as(r.toText()).noneMatch(f -> f.rule().equals("IETF-UNKNOWN_POLICY"));
    Report other = check(new Service().success(reply -> {
      reply.headers.remove("RateLimit");
      reply.headers.remove("RateLimit-Policy");
      return reply.header("RateLimit-Policy", "\"3-in-60sec\"; q=3; w=60; pk=:AQ==:")
          .header("RateLimit", "\"3-in-60sec\"; r=2; t=60; pk=:Ag==:");
    }), 0);
    assertThat(other.findings()).as(other.toText()).anyMatch(f -> f.rule().equals("IETF-UNKNOWN_POLICY"));
  }
}
