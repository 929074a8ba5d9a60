package dev.headroom.gateway.internal.config;

import com.fasterxml.jackson.databind.JsonNode;
import dev.headroom.gateway.config.Upstream;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Reads {@code upstreams}: the origin servers by name, each an {@code http://host:port} or the demo. */
final class UpstreamReader extends SectionReader {
  UpstreamReader(List<String> problems) {
    super(problems);
  }

  Map<String, Upstream> upstreams(JsonNode n) {
    Map<String, Upstream> out = new LinkedHashMap<>();
    if (n.isMissingNode() || !n.isObject() || n.isEmpty()) {
      problem("upstreams", n, "a mapping of one or more upstream names to {url: http://host:port}");
      return out;
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      String path = "upstreams." + e.getKey();
      JsonNode u = e.getValue();
      if (!object(path, u)) {
        continue;
      }
      keys(path, u, "url", "demo", "maxConnections");
      boolean demo = bool(path + ".demo", u.path("demo"), false);
      int maxConnections = (int) integer(path + ".maxConnections", u.path("maxConnections"), 256, 1, 65536);
      String host = "127.0.0.1";
      int port = 0;
      if (demo) {
        if (!u.path("url").isMissingNode()) {
          problem(path + ".url", u.path("url"), "no url when demo is true (the demo upstream picks its own port)");
        }
      } else {
        JsonNode url = u.path("url");
        URI uri = null;
        if (url.isTextual()) {
          try {
            uri = new URI(url.asText());
          } catch (URISyntaxException ex) {
            uri = null;
          }
        }
        if (uri == null || !"http".equals(uri.getScheme()) || uri.getHost() == null
            || (uri.getPath() != null && !uri.getPath().isEmpty() && !uri.getPath().equals("/"))
            || uri.getQuery() != null || uri.getUserInfo() != null) {
          problem(path + ".url", url, "an http://host:port URL without path, query or user info");
        } else {
          host = uri.getHost();
          port = uri.getPort() == -1 ? 80 : uri.getPort();
        }
      }
      out.put(e.getKey(), new Upstream(e.getKey(), host, port, demo, maxConnections));
    }
    return out;
  }
}
