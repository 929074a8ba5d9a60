package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.headroom.gateway.config.AccessLogSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The configuration is validated as a whole at start: every problem, with its path, value and expectation. */
class ConfigValidationTest {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  @Test
  void theSampleIsValidAndValidatesAgainstTheShippedSchema() throws Exception {
    GatewayConfig sample = GatewayConfig.sample();
    assertThat(sample.policies()).containsKeys("burst", "daily", "in-flight");
    assertThat(sample.policies().get("daily").quota().window()).isEqualTo(Duration.ofDays(1));
    JsonNode tree = YAML.readTree(GatewayConfig.sampleText());
    assertThat(Schemas.validate(Schemas.CONFIG, tree)).isEmpty();
  }

  @Test
  void aBadFileListsEveryProblemWithPathValueAndExpectation() {
    String bad = """
        service: {description: no name}
        listen: {port: 70000}
        store: {type: cassandra}
        trustedProxies: [10.0.0.0/99]
        upstreams:
          a: {url: "ftp://x"}
        policies:
          p1: {quota: 0, window: 1 day, why: ok, partition: "bogus"}
          p2: {quota: 5, window: 1m, why: ok, unit: parsecs, colour: red}
        routes:
          - {method: FETCH, path: items, upstream: b, policies: [p3], dialect: draft-99}
          - {method: GET, path: /x, upstream: a, dialect: [ietf, draft-07]}
        """;
    ConfigException e = catchThrowableOfType(() -> GatewayConfig.parse(bad, "bad.yaml"), ConfigException.class);
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("service.name: missing; expected"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("listen.port: 70000 is not valid; expected an integer from 0 to 65535"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("store.type: \"cassandra\" is not valid; expected memory or redis"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("trustedProxies[0]:").contains("10.0.0.0/99"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("upstreams.a.url: \"ftp://x\" is not valid"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("policies.p1.quota: 0 is not valid"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("policies.p1.window: \"1 day\" is not valid; expected a duration"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("policies.p1.partition:").contains("bogus"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("policies.p2.unit: \"parsecs\""));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("policies.p2.colour: unknown key"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("routes[0].method: \"FETCH\""));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("routes[0].path: \"items\"")
        .contains("at position 0: expected a template starting with /"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("routes[0].upstream: \"b\" is not valid; expected one of the upstreams: [a]"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("routes[0].policies[0]: \"p3\""));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("routes[0].dialect:").contains("draft-99"));
    // draft-ietf-httpapi-ratelimit-headers: the -07 Dictionary and the -08+ List of RateLimit cannot be sent together
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("routes[1].dialect:"));
    assertThat(e.getMessage()).startsWith("bad.yaml: " + e.problems().size() + " problems");
    assertThat(Schemas.validate(Schemas.CONFIG, readYaml(bad))).isNotEmpty();
  }

  /** Allow lists (headroom-http's AllowList): every bad entry, each naming its field; never a raw key quoted. */
  @Test
  void anAllowListIsCheckedEntryByEntry() {
    String bad = """
        service: {name: s, description: d}
        upstreams:
          a: {url: "http://127.0.0.1:1"}
        policies:
          p: {quota: 5, window: 1m, why: ok, allow: {cidrs: [10.0.0.1/8, 192.168.0.0/16, not-an-address], apiKeys: [my-raw-key], header: "X Key"}}
        routes:
          - {method: GET, path: /x, upstream: a, policies: [p]}
        """;
    ConfigException e = catchThrowableOfType(() -> GatewayConfig.parse(bad, "bad.yaml"), ConfigException.class);
    assertThat(e.problems()).filteredOn(p -> p.startsWith("policies.p.allow.cidrs: ")).hasSize(2);
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("policies.p.allow.apiKeys: an entry of 10 characters")
        .contains("never the key itself"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("policies.p.allow.header: 'X Key' is not valid"));
    assertThat(e.problems()).hasSize(4);
    assertThat(e.getMessage()).doesNotContain("my-raw-key");
  }

  /** A policy's queue: each bad value named with its path, its value and what was expected. */
  @Test
  void aQueueIsCheckedKeyByKey() {
    String bad = """
        service: {name: s, description: d}
        upstreams:
          a: {url: "http://127.0.0.1:1"}
        policies:
          p: {quota: 5, window: 1m, why: ok, queue: {maxWait: soon, maxQueued: 0, depth: 3}}
          q: {quota: 5, window: 1m, why: ok, queue: {maxWait: 2h}}
          r: {quota: 5, window: 1m, why: ok, queue: {maxQueued: 5}}
        routes:
          - {method: GET, path: /x, upstream: a, policies: [p, q, r]}
        """;
    ConfigException e = catchThrowableOfType(() -> GatewayConfig.parse(bad, "bad.yaml"), ConfigException.class);
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("policies.p.queue.maxWait: \"soon\" is not valid; expected a duration"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("policies.p.queue.maxQueued: \"0\" is not valid; expected an integer from 1 to 1000000"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("policies.p.queue.depth: unknown key"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("policies.q.queue.maxWait: \"PT2H\" is not valid; expected the longest a refused request waits for its turn, above 0 and at most 1h"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("policies.r.queue.maxWait: missing; expected"));
  }

  /**
   * A policy with a problem is reported once: the route naming it gets no second, misleading
   * problem ("expected one of the policies: []"), and no message repeats its field name.
   */
  @Test
  void aPolicyProblemDoesNotCascadeIntoTheRouteThatUsesIt() {
    String bad = """
        service: {name: s, description: d}
        upstreams:
          a: {url: "http://127.0.0.1:1"}
        policies:
          perip: {quota: 5, window: 1m, why: ok, partition: "client-ip+"}
        routes:
          - {name: r0, method: GET, path: /x, upstream: a, policies: [perip, nosuch]}
        """;
    ConfigException e = catchThrowableOfType(() -> GatewayConfig.parse(bad, "bad.yaml"), ConfigException.class);
    assertThat(e.problems()).hasSize(2);
    assertThat(e.problems().get(0)).startsWith("policies.perip.partition: ").doesNotContain("partitioning:");
    assertThat(e.problems().get(1)).isEqualTo("routes[0].policies[1]: \"nosuch\" is not valid; expected one of the policies: [perip]");
  }

  /** {@code service.humanUrl} is a plain path no route covers; {@code service.conformance} a level token. */
  @Test
  void theLimitsPagePathAndTheDeclaredLevelAreChecked() {
    String bad = """
        service: {name: s, description: d, humanUrl: "/docs/{page}", conformance: level-5}
        upstreams:
          a: {url: "http://127.0.0.1:1"}
        routes:
          - {name: r0, method: GET, path: /x, upstream: a}
        """;
    ConfigException e = catchThrowableOfType(() -> GatewayConfig.parse(bad, "bad.yaml"), ConfigException.class);
    assertThat(e.problems()).containsExactly(
        "service.humanUrl: \"/docs/{page}\" is not valid; expected a path such as /docs/limits (no variable, wildcard or "
            + "query), other than " + Set.of("/.well-known/limits", "/api/limits"),
        "service.conformance: \"level-5\" is not valid; expected one of [not-applicable, none, level-1, level-2, "
            + "level-3, level-4], or no key to publish the level the configuration delivers");
    String clash = bad.replace("\"/docs/{page}\", conformance: level-5", "/docs/limits").replace("path: /x", "path: /docs/**");
    ConfigException c = catchThrowableOfType(() -> GatewayConfig.parse(clash, "clash.yaml"), ConfigException.class);
    assertThat(c.problems()).containsExactly("service.humanUrl: \"/docs/limits\" is also a path of route r0 (/docs/**); "
        + "expected a path no route covers (the gateway serves the limits page there)");
  }

  /** Route paths are templates of the one grammar (headroom-http PathTemplate), checked with the rest. */
  @Test
  void routePathsAreCheckedByTheOneGrammarNamingThePosition() {
    String bad = """
        service: {name: s, description: d}
        upstreams:
          a: {url: "http://127.0.0.1:1"}
        policies:
          p: {quota: 5, window: 1m, why: ok}
        routes:
          - {name: r0, method: GET, path: "/a/**/b", upstream: a, policies: [p]}
          - {name: r1, method: GET, path: "/a/{id:x/y}", upstream: a, policies: [p]}
          - {name: r2, method: GET, path: "/api/limits/", upstream: a, policies: [p]}
          - {name: r3, method: GET, path: "/files/*.json", upstream: a, policies: [p]}
        """;
    ConfigException e = catchThrowableOfType(() -> GatewayConfig.parse(bad, "bad.yaml"), ConfigException.class);
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("routes[0].path: \"/a/**/b\" is not valid")
        .contains("at position 3: expected ** only as the last segment"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("routes[1].path:").contains("a regex cannot contain /"));
    // the trailing slash is dropped, so this is the discovery path itself
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("routes[2].path:").contains("a path other than"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("routes[3].path:").contains("at position 7"));
  }

  /** routes[].adaptive (headroom-enforcement AdaptiveConcurrency): each value by its key, then whether the limits go together. */
  @Test
  void adaptiveSettingsAreCheckedKeyByKey() throws Exception {
    String bad = """
        service: {name: s, description: d}
        upstreams:
          a: {url: "http://127.0.0.1:1"}
        policies:
          p: {quota: 5, window: 1m, why: ok}
        routes:
          - {name: r0, method: GET, path: /a, upstream: a, adaptive: {minLimit: 0, smoothing: 2, window: 5m, colour: red}}
          - {name: r1, method: GET, path: /b, upstream: a, policies: [p], adaptive: {minLimit: 10, maxLimit: 5}}
          - {name: r2, method: GET, path: /c, upstream: a, adaptive: {maxLimit: many, name: p, backoff: "x"}}
          - {name: r3, method: GET, path: /d, upstream: a, policies: [p], adaptive: {name: p}}
        """;
    ConfigException e = catchThrowableOfType(() -> GatewayConfig.parse(bad, "bad.yaml"), ConfigException.class);
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("routes[0].adaptive.minLimit: \"0\" is not valid; "
        + "expected a whole number of requests of at least 1"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("routes[0].adaptive.smoothing: \"2.0\" is not valid"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("routes[0].adaptive.window:")
        .contains("a duration from 1ms to 1m"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("routes[0].adaptive.colour: unknown key"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("routes[1].adaptive:")
        .contains("maxLimit: 5 is not valid; expected a whole number of requests of at least minLimit (10)"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("routes[2].adaptive.maxLimit: \"many\" is not valid;"
        + " expected a whole number"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("routes[2].adaptive.backoff: \"x\" is not valid;"
        + " expected a number"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("routes[3]").contains("adaptive")
        .contains("'p' is a policy of the route too"));
    assertThat(Schemas.validate(Schemas.CONFIG, readYaml(bad))).isNotEmpty();

    String good = bad.substring(0, bad.indexOf("routes:")) + """
        routes:
          - {name: r0, method: GET, path: /a, upstream: a, adaptive: {minLimit: 2, maxLimit: 50, window: 500ms}}
          - {name: r1, method: GET, path: /b, upstream: a, policies: [p], adaptive: {}}
        """;
    GatewayConfig config = GatewayConfig.parse(good, "good.yaml");
    assertThat(config.routes().get(0).adaptive().orElseThrow().maxLimit()).isEqualTo(50);
    assertThat(config.routes().get(1).adaptive().orElseThrow().name()).isEqualTo("adaptive");
    assertThat(Schemas.validate(Schemas.CONFIG, readYaml(good))).isEmpty();
  }

  @Test
  void invalidYamlNamesLineAndColumn() {
    ConfigException e = catchThrowableOfType(() -> GatewayConfig.parse("service: [\n", "x.yaml"), ConfigException.class);
    assertThat(e.problems()).singleElement().asString().startsWith("not valid YAML at line");
  }

  @Test
  void durationsAcceptShortFormsSecondsAndIso() throws Exception {
    String yaml = GatewayConfig.sampleText().replace("window: 10s", "window: PT10S").replace("window: 1d", "window: 86400");
    GatewayConfig c = GatewayConfig.parse(yaml, "t");
    assertThat(c.policies().get("burst").quota().window()).isEqualTo(Duration.ofSeconds(10));
    assertThat(c.policies().get("daily").quota().window()).isEqualTo(Duration.ofDays(1));
  }

  @Test
  void policyTextsAreCheckedByHeadroomHttpAtLoad_gracefulBoundaries_sc2_sc6() {
    String bad = """
        service: {name: S, origin: "https://api.example.com", changelog: "https://elsewhere.example/changes"}
        upstreams:
          a: {url: "http://127.0.0.1:9"}
        policies:
          mechanism: {quota: 5, window: 1m, why: We use Redis with a sliding window.}
          restated: {quota: 5, window: 1m, why: Rate limit exceeded}
          offsite:
            quota: 5
            window: 1m
            why: Limits keep the service available for everyone.
            guidance: {alternativeEndpoint: "https://evil.example/api", cachedResultUrl: "https://api.example.com/cache"}
          kind: {quota: 5, window: 1m, why: Limits keep the service available for everyone., limitType: Not A Token}
        routes:
          - {method: GET, path: /x, upstream: a, policies: [mechanism, restated, offsite, kind]}
        """;
    ConfigException e = catchThrowableOfType(() -> GatewayConfig.parse(bad, "t.yaml"), ConfigException.class);
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("policies.mechanism.why:").contains("SC-2"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("policies.restated.why:"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p)
        .startsWith("policies.offsite.guidance.alternativeEndpoint:").contains("SC-6").contains("evil.example"));
    assertThat(e.problems()).noneSatisfy(p -> assertThat(p).contains("cachedResultUrl"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("policies.kind.limitType:"));
    String origin = bad.replace("origin: \"https://api.example.com\"", "origin: \"ftp://x/y\"");
    ConfigException o = catchThrowableOfType(() -> GatewayConfig.parse(origin, "t.yaml"), ConfigException.class);
    assertThat(o.problems()).anySatisfy(p -> assertThat(p).startsWith("service.origin: \"ftp://x/y\""));
  }

  @Test
  void aChangelogOnAnotherOriginIsRefusedAtLoad_gracefulBoundaries_sc6() throws Exception {
    String yaml = """
        service: {name: S, origin: "https://api.example.com", changelog: "https://elsewhere.example/changes"}
        upstreams:
          a: {url: "http://127.0.0.1:9"}
        routes:
          - {method: GET, path: /x, upstream: a}
        """;
    ConfigException e = catchThrowableOfType(() -> GatewayConfig.parse(yaml, "t.yaml"), ConfigException.class);
    assertThat(e.problems()).singleElement().asString().startsWith("service.changelog:").contains("SC-6");
    assertThat(GatewayConfig.parse(yaml.replace("https://elsewhere.example/changes", "https://api.example.com/changes"),
        "ok.yaml").service().changelog()).hasValue("https://api.example.com/changes");
  }

  @Test
  void vendAndPkSettingsValidateAgainstTheSchemaAndTheReader() throws Exception {
    String yaml = """
        service: {name: S}
        pk: {exposure: hash}
        upstreams:
          a: {url: "http://127.0.0.1:9"}
        policies:
          f: {quota: 100, window: 1m, why: Limits keep the service available for everyone.}
        routes:
          - {method: GET, path: /x, upstream: a, pk: "off"}
          - name: vend
            type: vend
            path: /vend
            upstream: a
            vend: {limits: {function: f, functions: {orders.create: {service: f}}}, user: "header:X-User", capabilities: local}
        """;
    assertThat(GatewayConfig.parse(yaml, "ok.yaml").routes().get(1).vend()).isPresent();
    assertThat(Schemas.validate(Schemas.CONFIG, readYaml(yaml))).isEmpty();
    String bad = yaml.replace("orders.create", "nodot").replace("capabilities: local", "capabilities: maybe")
        .replace("path: /vend", "path: /vend\n    method: GET");
    ConfigException e = catchThrowableOfType(() -> GatewayConfig.parse(bad, "bad.yaml"), ConfigException.class);
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("routes[1].method: \"GET\""));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("routes[1].vend.capabilities: \"maybe\""));
    String badFunction = yaml.replace("orders.create", "nodot");
    ConfigException f = catchThrowableOfType(() -> GatewayConfig.parse(badFunction, "bad.yaml"), ConfigException.class);
    assertThat(f.problems()).singleElement().asString().startsWith("routes[1].vend.limits:").contains("nodot");
  }

  /** {@code accessLog}: off when absent; each bad key named with its value and what it may be, here and in the schema. */
  @Test
  void theAccessLogIsOffByDefaultAndCheckedKeyByKey() throws Exception {
    String yaml = """
        service: {name: s, description: d}
        accessLog: ACCESS
        upstreams:
          a: {url: "http://127.0.0.1:1"}
        routes:
          - {method: GET, path: /x, upstream: a}
        """;
    assertThat(GatewayConfig.sample().accessLog()).isEmpty();
    String ok = yaml.replace("ACCESS", "{format: combined, path: logs/access.log, query: true}");
    GatewayConfig c = GatewayConfig.parse(ok, "ok.yaml");
    assertThat(c.accessLog()).hasValueSatisfying(a -> {
      assertThat(a.format()).isEqualTo(AccessLogSettings.Format.COMBINED);
      assertThat(a.file()).contains(Path.of("logs/access.log"));
      assertThat(a.query()).isTrue();
    });
    assertThat(Schemas.validate(Schemas.CONFIG, readYaml(ok))).isEmpty();
    GatewayConfig stdout = GatewayConfig.parse(yaml.replace("ACCESS", "{path: stdout}"), "ok.yaml");
    assertThat(stdout.accessLog()).hasValueSatisfying(a -> {
      assertThat(a.format()).isEqualTo(AccessLogSettings.Format.JSON);
      assertThat(a.file()).isEmpty();
      assertThat(a.query()).isFalse();
    });
    String bad = yaml.replace("ACCESS", "{format: xml, path: \"\", query: sometimes, colour: red}");
    ConfigException e = catchThrowableOfType(() -> GatewayConfig.parse(bad, "bad.yaml"), ConfigException.class);
    assertThat(e.problems()).containsExactlyInAnyOrder(
        "accessLog.colour: unknown key; expected one of [format, path, query]",
        "accessLog.format: \"xml\" is not valid; expected json or combined",
        "accessLog.path: \"\" is not valid; expected stdout or a file path",
        "accessLog.query: \"sometimes\" is not valid; expected true or false");
    assertThat(Schemas.validate(Schemas.CONFIG, readYaml(bad))).hasSizeGreaterThanOrEqualTo(4);
    ConfigException notAMapping = catchThrowableOfType(() -> GatewayConfig.parse(yaml.replace("ACCESS", "stdout"),
        "bad.yaml"), ConfigException.class);
    assertThat(notAMapping.problems()).containsExactly("accessLog: \"stdout\" is not valid; expected a mapping");
  }

  private static JsonNode readYaml(String s) {
    try {
      return YAML.readTree(s);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }
}
