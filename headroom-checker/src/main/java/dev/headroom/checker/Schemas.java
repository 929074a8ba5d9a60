package dev.headroom.checker;

import com.fasterxml.jackson.databind.JsonNode;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The published Graceful Boundaries JSON Schemas (draft 2020-12), loaded from this module's
 * resources ({@code graceful-boundaries/}, with their licence) so that checking never fetches them.
 * Thread-safe.
 */
final class Schemas {

  private static final String BASE = "https://gracefulboundaries.dev/schema/";
  private static final JsonSchemaFactory FACTORY = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012,
      b -> b.schemaMappers(m -> m.mapPrefix(BASE, "classpath:graceful-boundaries/")));

  static final JsonSchema LIMITS = FACTORY.getSchema(SchemaLocation.of(BASE + "limits.schema.json"));
  static final JsonSchema REFUSAL = FACTORY.getSchema(SchemaLocation.of(BASE + "refusal.schema.json"));
  static final JsonSchema REFUSAL_429 = FACTORY.getSchema(SchemaLocation.of(BASE + "refusal-429.schema.json"));

  private Schemas() {}

  /** The violations, as "path: message", sorted; empty when the document validates. */
  static List<String> violations(JsonSchema schema, JsonNode document) {
    Set<ValidationMessage> errors = schema.validate(document);
    List<String> out = new ArrayList<>();
    for (ValidationMessage m : errors) {
      out.add(m.getMessage());
    }
    out.sort(null);
    return out;
  }
}
