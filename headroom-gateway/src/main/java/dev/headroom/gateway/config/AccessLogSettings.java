package dev.headroom.gateway.config;

import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/**
 * The access log ({@code accessLog}): one line per exchange, written off the event loops.
 *
 * @param format {@link Format#JSON} (one JSON object a line) or {@link Format#COMBINED} (the
 *     Apache/nginx combined format followed by Headroom's fields as {@code key=value})
 * @param file the file lines are appended to; empty for standard output ({@code path: stdout})
 * @param query whether the path keeps its query string (off by default: queries carry tokens)
 */
public record AccessLogSettings(Format format, Optional<Path> file, boolean query) {

  /** How a line is written. */
  public enum Format {
    /** One JSON object a line. */
    JSON,
    /** The combined log format, then Headroom's fields as {@code key=value}. */
    COMBINED
  }

  public AccessLogSettings {
    Objects.requireNonNull(format, "format");
    Objects.requireNonNull(file, "file");
  }
}
