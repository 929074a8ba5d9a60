package dev.headroom.http.body;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SchemaRegistryConfig;
import com.networknt.schema.SpecificationVersion;
import com.networknt.schema.path.PathType;
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
  private static final SchemaRegistry REGISTRY = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12,
      b -> b.schemaIdResolvers(r -> r.mapPrefix(BASE, "classpath:graceful-boundaries/"))
          .schemaRegistryConfig(SchemaRegistryConfig.builder().pathType(PathType.LEGACY).build()));

  public static final Schema REFUSAL = REGISTRY.getSchema(SchemaLocation.of(BASE + "refusal.schema.json"));
  public static final Schema REFUSAL_429 = REGISTRY.getSchema(SchemaLocation.of(BASE + "refusal-429.schema.json"));
  public static final Schema LIMITS = REGISTRY.getSchema(SchemaLocation.of(BASE + "limits.schema.json"));

  private GracefulBoundariesSchemas() {}

  /** The schema violations of a JSON text, each as "$.path: message"; empty when it validates. */
  public static Set<String> violations(Schema schema, String json) {
    try {
      JsonNode node = MAPPER.readTree(json);
      return schema.validate(node).stream().map(Error::toString).collect(Collectors.toSet());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
