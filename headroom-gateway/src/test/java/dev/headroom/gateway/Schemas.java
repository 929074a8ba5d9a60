package dev.headroom.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import java.util.List;

/** The Graceful Boundaries schemas (copied with their LICENSE) and the gateway's config schema. */
final class Schemas {
  private static final SchemaRegistry REGISTRY = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12,
      b -> b.schemaIdResolvers(m -> m
          .mapPrefix("https://gracefulboundaries.dev/schema/", "classpath:graceful-boundaries/")
          .mapPrefix("https://headroom.dev/schema/", "classpath:")));

  static final Schema REFUSAL = load("https://gracefulboundaries.dev/schema/refusal.schema.json");
  static final Schema REFUSAL_429 = load("https://gracefulboundaries.dev/schema/refusal-429.schema.json");
  static final Schema LIMITS = load("https://gracefulboundaries.dev/schema/limits.schema.json");
  static final Schema CONFIG = load("https://headroom.dev/schema/headroom-config.schema.json");

  private Schemas() {}

  private static Schema load(String uri) {
    return REGISTRY.getSchema(SchemaLocation.of(uri));
  }

  static List<Error> validate(Schema schema, JsonNode node) {
    return schema.validate(node);
  }
}
