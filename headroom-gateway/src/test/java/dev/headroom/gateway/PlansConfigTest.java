package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.headroom.enforcement.partition.ApiKeys;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code plans} section: a valid one passes the reader and the shipped JSON Schema alike; a bad
 * one lists every problem with its YAML path, the value found and what was expected.
 */
class PlansConfigTest {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  @TempDir Path dir;

  String config(String plans) {
    return """
        service: {name: Plans}
        upstreams:
          up: {url: "http://127.0.0.1:9"}
        policies:
          api: {quota: 60, window: 1m, partition: api-key, why: Limits keep the service available for everyone.}
        routes:
          - {method: GET, path: /x, upstream: up, policies: [api]}
        """ + plans;
  }

  @Test
  void aValidSectionIsReadAndMatchesTheSchema() throws Exception {
    Path keys = dir.resolve("keys.txt");
    Files.writeString(keys, ApiKeys.sha256("k") + " pro\n");
    String yaml = config("""
        plans:
          fallback: free
          resolver: {type: api-key-file, file: "%s", header: X-Key}
          catalog:
            free: {url: /pricing, policies: {api: {quota: 60}}}
            pro: {url: /pricing#pro, policies: {api: {quota: 1000, window: 1m, algorithm: sliding-window}}}
        """.formatted(keys));
    GatewayConfig c = GatewayConfig.parse(yaml, "ok.yaml");
    assertThat(c.plans()).isPresent();
    assertThat(c.plans().get().plans().plans()).extracting(p -> p.name()).containsExactly("free", "pro");
    JsonNode tree = YAML.readTree(yaml);
    assertThat(Schemas.CONFIG.validate(tree)).isEmpty();
  }

  @Test
  void aBadSectionNamesFieldValueAndExpectation() {
    String yaml = config("""
        plans:
          fallback: gold
          resolver: {type: api-key-file, file: "%s"}
          catalog:
            free: {policies: {api: {quota: 0}, nope: {quota: 5}}}
            pro: {url: "ftp://x", policies: {api: {window: "1 day", algorithm: magic}}}
            "9bad": {}
        """.formatted(dir.resolve("missing.txt")));
    ConfigException e = catchThrowableOfType(() -> GatewayConfig.parse(yaml, "bad.yaml"), ConfigException.class);
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("plans.catalog.free.policies.api.quota: 0 is not valid; expected an integer from 1"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("plans.catalog.free.policies.nope: not a policy of policies; expected one of [api]"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("plans.catalog.pro.url: \"ftp://x\" is not valid"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("plans.catalog.pro.policies.api.window: \"1 day\" is not valid; expected a duration"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("plans.catalog.pro.policies.api.algorithm: \"magic\" is not valid; expected fixed-window, sliding-window"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("plans.catalog.9bad: \"9bad\" is not valid; expected a plan name of 1 to 32 letters"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("plans.resolver.file: ").contains("missing.txt").contains("cannot be read"));
  }

  List<String> problems(String fallback, Path keys) {
    String yaml = config("""
        plans:
          fallback: %s
          resolver: {type: api-key-file, file: "%s"}
          catalog:
            free: {policies: {api: {quota: 60}}}
        """.formatted(fallback, keys));
    return catchThrowableOfType(() -> GatewayConfig.parse(yaml, "bad.yaml"), ConfigException.class).problems();
  }

  @Test
  void anUndeclaredFallbackAndABadKeyFileAreRefused() throws Exception {
    Path keys = dir.resolve("keys.txt");
    Files.writeString(keys, "# keys\nsecret-key-in-clear pro\n");
    assertThat(problems("free", keys)).singleElement().satisfies(p -> assertThat(p).startsWith("plans.resolver.file: ")
        .contains("line 2").contains("expected '<sha256-hex of the key> <plan>'").doesNotContain("secret-key-in-clear"));
    Files.writeString(keys, ApiKeys.sha256("k") + " free\n");
    assertThat(problems("gold", keys))
        .containsExactly("plans.fallback: \"gold\" is not valid; expected one of [free]");
  }

  @Test
  void aPolicyConditionNamingNoRouteIsRefused() {
    String yaml = """
        service: {name: Plans}
        upstreams:
          up: {url: "http://127.0.0.1:9"}
        policies:
          api: {quota: 60, window: 1m, when: {routes: [logn]}, count: sometimes, why: Limits keep the service available for everyone.}
        routes:
          - {name: login, method: GET, path: /x, upstream: up, policies: [api], cost: {header: X-Cost}}
        """;
    List<String> problems = catchThrowableOfType(() -> GatewayConfig.parse(yaml, "bad.yaml"), ConfigException.class).problems();
    assertThat(problems).anySatisfy(p -> assertThat(p).startsWith("policies.api.count: \"sometimes\" is not valid; expected all, failures"));
    assertThat(problems).anySatisfy(p -> assertThat(p).startsWith("routes[0].cost.max: missing; expected the largest cost"));
    String typo = yaml.replace(", count: sometimes", "").replace(", cost: {header: X-Cost}", "");
    assertThat(catchThrowableOfType(() -> GatewayConfig.parse(typo, "typo.yaml"), ConfigException.class).problems())
        .containsExactly("policies.api.when.routes: \"logn\" is not valid; expected one of the route names [login]");
  }
}
