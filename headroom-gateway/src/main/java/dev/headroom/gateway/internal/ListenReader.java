package dev.headroom.gateway.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.headroom.gateway.GatewayConfig.Admin;
import dev.headroom.gateway.GatewayConfig.Listen;
import dev.headroom.http.partition.CidrRange;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads where the gateway is reached and by whom: {@code listen}, {@code admin} and
 * {@code trustedProxies} (addresses or CIDR blocks whose forwarding headers are believed).
 */
final class ListenReader extends SectionReader {
  ListenReader(List<String> problems) {
    super(problems);
  }

  Listen listen(JsonNode n) {
    if (n.isMissingNode()) {
      return new Listen("127.0.0.1", 8080);
    }
    if (!object("listen", n)) {
      return null;
    }
    keys("listen", n, "host", "port");
    String host = optionalText("listen.host", n.path("host")).orElse("127.0.0.1");
    int port = (int) integer("listen.port", n.path("port"), 8080, 0, 65535);
    return new Listen(host, port);
  }

  Admin admin(JsonNode n) {
    if (n.isMissingNode()) {
      return new Admin(true, "127.0.0.1", 0);
    }
    if (!object("admin", n)) {
      return null;
    }
    keys("admin", n, "enabled", "host", "port");
    boolean enabled = bool("admin.enabled", n.path("enabled"), true);
    String host = optionalText("admin.host", n.path("host")).orElse("127.0.0.1");
    int port = (int) integer("admin.port", n.path("port"), 0, 0, 65535);
    return new Admin(enabled, host, port);
  }

  List<String> trustedProxies(JsonNode n) {
    List<String> out = new ArrayList<>();
    if (n.isMissingNode()) {
      return out;
    }
    if (!n.isArray()) {
      problem("trustedProxies", n, "a list of IP addresses or CIDR blocks such as 10.0.0.0/8");
      return out;
    }
    for (int i = 0; i < n.size(); i++) {
      JsonNode e = n.get(i);
      String path = "trustedProxies[" + i + "]";
      if (!e.isTextual()) {
        problem(path, e, "an IP address or CIDR block such as 10.0.0.0/8 or ::1");
        continue;
      }
      try {
        CidrRange.parse(e.asText());
        out.add(e.asText());
      } catch (IllegalArgumentException ex) {
        problems.add(path + ": " + ex.getMessage());
      }
    }
    return out;
  }
}
