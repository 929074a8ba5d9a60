package dev.headroom.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** IDEs complete headroom.* from the metadata spring-boot-configuration-processor generates. */
class ConfigurationMetadataTest {

  @Test
  void metadataListsEveryPropertyWithItsDescription() throws Exception {
    JsonNode metadata;
    try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
      assertThat(in).as("META-INF/spring-configuration-metadata.json on the classpath").isNotNull();
      metadata = new ObjectMapper().readTree(in);
    }
    List<String> names = new ArrayList<>();
    for (JsonNode p : metadata.path("properties")) {
      names.add(p.path("name").asText());
      assertThat(p.path("description").asText()).as("description of %s", p.path("name")).isNotBlank();
    }
    assertThat(names).contains("headroom.enabled", "headroom.service.name", "headroom.service.description",
        "headroom.service.origin", "headroom.why", "headroom.dialects", "headroom.policies", "headroom.routes",
        "headroom.store.type", "headroom.store.max-keys", "headroom.store.on-failure",
        "headroom.store.replica-acknowledgements.replicas", "headroom.store.replica-acknowledgements.timeout", "headroom.discovery.enabled",
        "headroom.discovery.paths", "headroom.client-ip.trusted-proxies", "headroom.partition-key-exposure",
        "headroom.filter-order", "headroom.headers.omit-on-redirect", "headroom.headers.only-near-exhaustion",
        "headroom.headers.jitter", "headroom.plans.fallback", "headroom.plans.deadline", "headroom.plans.catalog");
    List<String> hinted = new ArrayList<>();
    metadata.path("hints").forEach(h -> hinted.add(h.path("name").asText()));
    assertThat(hinted).contains("headroom.dialects", "headroom.store.type", "headroom.policies.values.unit",
        "headroom.policies.values.allow.header");
  }
}
