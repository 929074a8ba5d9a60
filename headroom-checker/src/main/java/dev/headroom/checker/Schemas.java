package dev.headroom.checker;

import com.fasterxml.jackson.databind.JsonNode;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SchemaRegistryConfig;
import com.networknt.schema.SpecificationVersion;
import com.networknt.schema.path.PathType;
import java.util.ArrayList;
import java.util.List;

/**
 * The published Graceful Boundaries JSON Schemas (draft 2020-12), loaded from this module's
 * resources ({@code graceful-boundaries/}, with their licence) so that checking never fetches them.
 * Violations name their place as a JSON path from {@code $} ({@code $.limits}), the form
 * json-schema-validator 1.x wrote and 2.x writes under {@link PathType#LEGACY}. Thread-safe.
 */
final class Schemas {

  private static final String BASE = "https://gracefulboundaries.dev/schema/";
  private static final SchemaRegistry REGISTRY = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12,
      b -> b.schemaIdResolvers(r -> r.mapPrefix(BASE, "classpath:graceful-boundaries/"))
          .schemaRegistryConfig(SchemaRegistryConfig.builder().pathType(PathType.LEGACY).build()));

  static final Schema LIMITS = REGISTRY.getSchema(SchemaLocation.of(BASE + "limits.schema.json"));
  static final Schema REFUSAL = REGISTRY.getSchema(SchemaLocation.of(BASE + "refusal.schema.json"));
  static final Schema REFUSAL_429 = REGISTRY.getSchema(SchemaLocation.of(BASE + "refusal-429.schema.json"));

  private Schemas() {}

  /** The violations, as "path: message", sorted; empty when the document validates. */
  static List<String> violations(Schema schema, JsonNode document) {
    List<String> out = new ArrayList<>();
    for (Error e : schema.validate(document)) {
      out.add(e.toString());
    }
    out.sort(null);
    return out;
  }
}
