package dev.headroom.gateway;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Configuration files of a chosen size for the tests of the configuration's bounds. */
public final class ConfigFiles {
  private ConfigFiles() {}

  /**
   * The YAML followed by comment lines of 80 bytes (many short lines: SnakeYAML reads them in
   * linear time) so that the whole is exactly {@code bytes} bytes of UTF-8.
   */
  public static String padded(String yaml, long bytes) {
    StringBuilder sb = new StringBuilder(yaml).append('\n');
    long left = bytes - sb.toString().getBytes(StandardCharsets.UTF_8).length;
    if (left < 80) {
      throw new IllegalArgumentException("too small to pad: " + bytes);
    }
    String line = "# padding " + "x".repeat(69) + "\n";
    for (; left >= 160; left -= 80) {
      sb.append(line);
    }
    sb.append('#').append("x".repeat((int) left - 2)).append('\n');
    return sb.toString();
  }

  /** Writes {@link #padded} to {@code file} and returns the file. */
  public static Path write(Path file, String yaml, long bytes) throws IOException {
    String text = padded(yaml, bytes);
    Files.writeString(file, text, StandardCharsets.UTF_8);
    if (Files.size(file) != bytes) {
      throw new IllegalStateException("padded to " + Files.size(file) + " bytes, not " + bytes);
    }
    return file;
  }
}
