package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;

/**
 * The configuration reference in the module's README and the JSON Schema describe the same file:
 * every key the schema declares has a row in one of the README's {@code | key | meaning |} tables,
 * and every row names a key of the schema, so neither can gain a key the other lacks. A key is
 * written as its full dotted path: {@code NAME} for a name the user chooses (a map's entries),
 * {@code []} for each item of a list ({@code routes[].cost.units}).
 */
class ConfigReferenceTest {
  private static final Pattern ROW = Pattern.compile("^\\|\\s*`([^`]+)`\\s*\\|");

  @Test
  void everySchemaKeyIsDocumentedAndEveryDocumentedKeyIsInTheSchema() throws IOException {
    Set<String> schema = schemaKeys();
    Set<String> readme = readmeKeys(Path.of("README.md"));
    // the walk must see the schema's nesting, or the comparison below proves nothing
    assertThat(schema).contains("service.name", "upstreams.NAME.url", "routes[].cost.units",
        "plans.catalog.NAME.policies.NAME.quota", "plans.resolver.cache.ttl");

    Set<String> undocumented = new TreeSet<>(schema);
    undocumented.removeAll(readme);
    Set<String> unknown = new TreeSet<>(readme);
    unknown.removeAll(schema);
    SoftAssertions.assertSoftly(soft -> {
      soft.assertThat(undocumented)
          .as("keys of headroom-config.schema.json with no row in headroom-gateway/README.md's reference")
          .isEmpty();
      soft.assertThat(unknown)
          .as("rows of headroom-gateway/README.md's reference naming no key of headroom-config.schema.json")
          .isEmpty();
    });
  }

  @Test
  void theReferenceNamesEachKeyOnce() throws IOException {
    List<String> rows = readmeRows(Path.of("README.md"));
    Set<String> seen = new TreeSet<>();
    Set<String> twice = new TreeSet<>();
    for (String row : rows) {
      if (!seen.add(row)) {
        twice.add(row);
      }
    }
    assertThat(rows).hasSizeGreaterThan(100);
    assertThat(twice).as("keys with more than one row").isEmpty();
  }

  /** Every property path of the schema, through {@code $ref}s and {@code oneOf}/{@code anyOf}/{@code allOf}. */
  static Set<String> schemaKeys() throws IOException {
    JsonNode root;
    try (InputStream in = GatewayConfig.class.getResourceAsStream(GatewayConfig.SCHEMA_RESOURCE)) {
      assertThat(in).as(GatewayConfig.SCHEMA_RESOURCE).isNotNull();
      root = new ObjectMapper().readTree(in);
    }
    Set<String> keys = new TreeSet<>();
    walk(root, root, "", keys, new ArrayList<>());
    return keys;
  }

  private static void walk(JsonNode root, JsonNode node, String path, Set<String> keys, List<String> refs) {
    if (node.has("$ref")) {
      String ref = node.get("$ref").asText();
      assertThat(ref).as("a local reference").startsWith("#/$defs/");
      if (!refs.contains(ref)) {
        refs.add(ref);
        walk(root, root.path("$defs").path(ref.substring("#/$defs/".length())), path, keys, refs);
        refs.remove(refs.size() - 1);
      }
    }
    for (String combinator : List.of("oneOf", "anyOf", "allOf")) {
      for (JsonNode branch : node.path(combinator)) {
        walk(root, branch, path, keys, refs);
      }
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = node.path("properties").fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> property = it.next();
      String key = path.isEmpty() ? property.getKey() : path + "." + property.getKey();
      keys.add(key);
      walk(root, property.getValue(), key, keys, refs);
    }
    if (node.path("additionalProperties").isObject()) {
      walk(root, node.get("additionalProperties"), path + ".NAME", keys, refs);
    }
    for (JsonNode pattern : node.path("patternProperties")) {
      walk(root, pattern, path + ".NAME", keys, refs);
    }
    if (node.path("items").isObject()) {
      walk(root, node.get("items"), path + "[]", keys, refs);
    }
  }

  static Set<String> readmeKeys(Path readme) throws IOException {
    return new TreeSet<>(readmeRows(readme));
  }

  /** The first cells of the rows of every table whose header is {@code | key | ...}. */
  private static List<String> readmeRows(Path readme) throws IOException {
    List<String> rows = new ArrayList<>();
    boolean inReference = false;
    for (String line : Files.readAllLines(readme, StandardCharsets.UTF_8)) {
      if (!line.startsWith("|")) {
        inReference = false;
      } else if (line.matches("^\\|\\s*key\\s*\\|.*")) {
        inReference = true;
      } else if (inReference && !line.matches("^\\|\\s*-+\\s*\\|.*")) {
        Matcher m = ROW.matcher(line);
        assertThat(m.find()).as("a reference row starts with one key in backquotes: %s", line).isTrue();
        rows.add(m.group(1));
      }
    }
    return rows;
  }
}
