package dev.headroom.http.body;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The published Graceful Boundaries JSON Schemas (draft 2020-12), loaded from the test classpath
 * copy in {@code graceful-boundaries/} so that no test reaches the network.
 */
public final class GracefulBoundariesSchemas {

  private static final String BASE = "https://gracefulboundaries.dev/schema/";
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final JsonSchemaFactory FACTORY = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012,
      b -> b.schemaMappers(m -> m.mapPrefix(BASE, "classpath:graceful-boundaries/")));

  public static final JsonSchema REFUSAL = FACTORY.getSchema(SchemaLocation.of(BASE + "refusal.schema.json"));
  public static final JsonSchema REFUSAL_429 = FACTORY.getSchema(SchemaLocation.of(BASE + "refusal-429.schema.json"));
  public static final JsonSchema LIMITS = FACTORY.getSchema(SchemaLocation.of(BASE + "limits.schema.json"));

  private GracefulBoundariesSchemas() {}

  /** The schema violations of a JSON text; empty when it validates. */
  public static Set<String> violations(JsonSchema schema, String json) {
    try {
      JsonNode node = MAPPER.readTree(json);
      Set<ValidationMessage> errors = schema.validate(node);
      return errors.stream().map(ValidationMessage::getMessage).collect(Collectors.toSet());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
