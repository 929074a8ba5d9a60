package dev.headroom.gateway.internal.config;

import com.fasterxml.jackson.databind.JsonNode;
import dev.headroom.gateway.config.AccessLogSettings;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Reads {@code accessLog}: {@code format} ({@code json} or {@code combined}, default {@code json}),
 * {@code path} ({@code stdout}, the default, or a file, relative to the configuration's folder) and
 * {@code query} (default false). Absent, the access log is off.
 */
final class AccessLogReader extends SectionReader {
  AccessLogReader(List<String> problems, Path folder) {
    super(problems, folder);
  }

  Optional<AccessLogSettings> accessLog(JsonNode n) {
    if (n.isMissingNode()) {
      return Optional.empty();
    }
    if (!object("accessLog", n)) {
      return Optional.empty();
    }
    keys("accessLog", n, "format", "path", "query");
    AccessLogSettings.Format format = AccessLogSettings.Format.JSON;
    JsonNode f = n.path("format");
    if (!f.isMissingNode()) {
      if (f.isTextual() && (f.asText().equals("json") || f.asText().equals("combined"))) {
        format = AccessLogSettings.Format.valueOf(f.asText().toUpperCase(Locale.ROOT));
      } else {
        problem("accessLog.format", f, "json or combined");
      }
    }
    Optional<Path> file = Optional.empty();
    JsonNode p = n.path("path");
    if (!p.isMissingNode()) {
      if (!p.isTextual() || p.asText().isBlank()) {
        problem("accessLog.path", p, "stdout or a file path");
      } else if (!p.asText().equals("stdout")) {
        try {
          file = Optional.of(file(p.asText()));
        } catch (InvalidPathException e) {
          problem("accessLog.path", p, "stdout or a file path (" + e.getReason() + ")");
        }
      }
    }
    boolean query = bool("accessLog.query", n.path("query"), false);
    return Optional.of(new AccessLogSettings(format, file, query));
  }
}
