package dev.headroom.gateway.internal.config;

import com.fasterxml.jackson.databind.JsonNode;
import dev.headroom.enforcement.discovery.ConformanceLevel;
import dev.headroom.enforcement.settings.ServiceSettings;
import dev.headroom.enforcement.settings.SettingsReader;
import dev.headroom.gateway.config.Service;
import dev.headroom.http.path.PathTemplate;
import java.net.URI;
import java.util.Arrays;
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
    keys("service", n, "name", "description", "changelog", "feed", "origin", "statusUrl", "humanUrl", "conformance");
    String name = requiredText("service.name", n.path("name"), "the service's name");
    String description = optionalText("service.description", n.path("description")).orElse("");
    Optional<String> changelog = optionalUrl("service.changelog", n.path("changelog"));
    Optional<String> feed = optionalUrl("service.feed", n.path("feed"));
    // the settings model's ServiceSettings, read by its converter as Spring's headroom.service is
    ServiceSettings settings = new ServiceSettings(name, description);
    optionalText("service.origin", n.path("origin")).ifPresent(settings::setOrigin);
    SettingsReader model = SettingsReader.of("", key -> key);
    int before = problems.size();
    Optional<URI> origin = model.origin(settings);
    addModelProblems(model.problems(), before);
    Optional<String> statusUrl = optionalUrl("service.statusUrl", n.path("statusUrl"));
    Optional<String> humanUrl = humanUrl(n.path("humanUrl"));
    Optional<ConformanceLevel> conformance = Optional.empty();
    Optional<String> conformanceText = optionalText("service.conformance", n.path("conformance"));
    if (conformanceText.isPresent()) {
      try {
        conformance = Optional.of(ConformanceLevel.fromToken(conformanceText.get()));
      } catch (IllegalArgumentException e) {
        problem("service.conformance", n.path("conformance"), "one of "
            + Arrays.stream(ConformanceLevel.values()).map(ConformanceLevel::token).toList()
            + ", or no key to publish the level the configuration delivers");
      }
    }
    return new Service(name, description, changelog, feed, origin, statusUrl, humanUrl, conformance);
  }

  /**
   * The path the gateway serves its limits page at: a plain path (one grammar,
   * {@link PathTemplate}, with no variable or wildcard) other than the discovery paths.
   */
  private Optional<String> humanUrl(JsonNode n) {
    Optional<String> text = optionalText("service.humanUrl", n);
    if (text.isEmpty()) {
      return text;
    }
    String expected = "a path such as /docs/limits (no variable, wildcard or query), other than "
        + RouteReader.RESERVED_PATHS;
    try {
      PathTemplate t = PathTemplate.parse(text.get());
      if (!t.isLiteral() || RouteReader.RESERVED_PATHS.contains(t.toString())) {
        problem("service.humanUrl", n, expected);
        return Optional.empty();
      }
      return Optional.of(t.toString());
    } catch (IllegalArgumentException e) {
      problem("service.humanUrl", n, expected);
      return Optional.empty();
    }
  }
}
