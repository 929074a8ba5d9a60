package dev.headroom.gateway.internal.admin;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The dashboard's files, served from the jar: the page, its script and style, and uPlot (MIT
 * licensed, its licence beside it in the same resource folder), so that the page loads with nothing
 * outside the machine reachable. Only the files listed here are served: a path names one of them or
 * nothing (no path is ever resolved against the resource folder).
 */
final class DashboardAssets {
  /** A file and its media type. */
  record Asset(String contentType, byte[] bytes) {}

  private static final String FOLDER = "/dev/headroom/gateway/dashboard/";
  private static final Map<String, String> FILES = Map.of(
      "index.html", "text/html; charset=utf-8",
      "dashboard.js", "text/javascript; charset=utf-8",
      "dashboard.css", "text/css; charset=utf-8",
      "uPlot.iife.min.js", "text/javascript; charset=utf-8",
      "uPlot.min.css", "text/css; charset=utf-8",
      "uPlot.LICENSE", "text/plain; charset=utf-8");
  private static final Map<String, Asset> LOADED = load();

  private DashboardAssets() {}

  /** The file {@code path} names ({@code /dashboard} is the page), if it is one of the dashboard's. */
  static Optional<Asset> get(String path) {
    String name = path.equals("/dashboard") || path.equals("/dashboard/") ? "index.html"
        : path.substring("/dashboard/".length());
    return Optional.ofNullable(LOADED.get(name));
  }

  private static Map<String, Asset> load() {
    Map<String, Asset> m = new HashMap<>();
    FILES.forEach((name, type) -> {
      try (InputStream in = DashboardAssets.class.getResourceAsStream(FOLDER + name)) {
        if (in == null) {
          throw new IllegalStateException("missing resource " + FOLDER + name);
        }
        m.put(name, new Asset(type, in.readAllBytes()));
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read resource " + FOLDER + name, e);
      }
    });
    return Map.copyOf(m);
  }
}
