package dev.headroom.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import java.util.Set;

/** The Graceful Boundaries schemas (copied with their LICENSE) and the gateway's config schema. */
final class Schemas {
  private static final JsonSchemaFactory FACTORY = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012,
      b -> b.schemaMappers(m -> m
          .mapPrefix("https://gracefulboundaries.dev/schema/", "classpath:graceful-boundaries/")
          .mapPrefix("https://headroom.dev/schema/", "classpath:")));

  static final JsonSchema REFUSAL = load("https://gracefulboundaries.dev/schema/refusal.schema.json");
  static final JsonSchema REFUSAL_429 = load("https://gracefulboundaries.dev/schema/refusal-429.schema.json");
  static final JsonSchema LIMITS = load("https://gracefulboundaries.dev/schema/limits.schema.json");
  static final JsonSchema CONFIG = load("https://headroom.dev/schema/headroom-config.schema.json");

  private Schemas() {}

  private static JsonSchema load(String uri) {
    return FACTORY.getSchema(SchemaLocation.of(uri));
  }

  static Set<ValidationMessage> validate(JsonSchema schema, JsonNode node) {
    return schema.validate(node);
  }
}
