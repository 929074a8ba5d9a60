package dev.headroom.gateway.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.headroom.gateway.GatewayConfig.Service;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.PolicyTexts;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.List;
import java.util.Optional;

/**
 * Reads {@code service}: who the gateway speaks for in discovery documents and refusals, and the
 * public {@code origin} that absolute guidance URLs must share (Graceful Boundaries SC-6).
 */
final class ServiceReader extends SectionReader {
  ServiceReader(List<String> problems) {
    super(problems);
  }

  Service service(JsonNode n) {
    if (n.isMissingNode()) {
      problem("service", n, "a mapping with name and description (the discovery document's service)");
      return null;
    }
    if (!object("service", n)) {
      return null;
    }
    keys("service", n, "name", "description", "changelog", "feed", "origin", "statusUrl");
    String name = requiredText("service.name", n.path("name"), "the service's name");
    String description = optionalText("service.description", n.path("description")).orElse("");
    Optional<String> changelog = optionalUrl("service.changelog", n.path("changelog"));
    Optional<String> feed = optionalUrl("service.feed", n.path("feed"));
    Optional<URI> origin = Optional.empty();
    Optional<String> originText = optionalText("service.origin", n.path("origin"));
    if (originText.isPresent()) {
      try {
        URI o = new URI(originText.get());
        // headroom-http decides what an origin is (scheme, host, optional port only)
        LimitRefusals.builder().ticker(dev.headroom.Ticker.system()).origin(o)
            .defaults(PolicyTexts.builder(ConfigReader.DEFAULT_WHY).build()).build();
        origin = Optional.of(o);
      } catch (URISyntaxException | IllegalArgumentException e) {
        problem("service.origin", n.path("origin"), "the public origin callers reach the gateway at, "
            + "such as https://api.example.com (scheme, host and optional port only)");
      }
    }
    Optional<String> statusUrl = optionalUrl("service.statusUrl", n.path("statusUrl"));
    return new Service(name, description, changelog, feed, origin, statusUrl);
  }
}
