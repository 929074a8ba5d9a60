package dev.headroom.gateway.internal.config;

import com.fasterxml.jackson.databind.JsonNode;
import dev.headroom.enforcement.partition.CidrRange;
import dev.headroom.gateway.config.Admin;
import dev.headroom.gateway.config.AdminToken;
import dev.headroom.gateway.config.Listen;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * Reads where the gateway is reached and by whom: {@code listen}, {@code admin} and
 * {@code trustedProxies} (addresses or CIDR blocks whose forwarding headers are believed).
 */
final class ListenReader extends SectionReader {
  /** The environment variables {@code admin.tokenEnv} may name. */
  private final Function<String, String> env;

  ListenReader(List<String> problems, Function<String, String> env, Path folder) {
    super(problems, folder);
    this.env = env;
  }

  /** The shortest admin token accepted: guessing it must not be a matter of a few tries. */
  static final int MIN_TOKEN_LENGTH = 16;

  Listen listen(JsonNode n) {
    if (n.isMissingNode()) {
      return new Listen("127.0.0.1", 8080);
    }
    if (!object("listen", n)) {
      return null;
    }
    keys("listen", n, "host", "port", "http2");
    String host = optionalText("listen.host", n.path("host")).orElse("127.0.0.1");
    int port = (int) integer("listen.port", n.path("port"), 8080, 0, 65535);
    boolean http2 = bool("listen.http2", n.path("http2"), false);
    return new Listen(host, port, http2);
  }

  Admin admin(JsonNode n) {
    if (n.isMissingNode()) {
      return new Admin(true, "127.0.0.1", 0, Optional.empty());
    }
    if (!object("admin", n)) {
      return null;
    }
    keys("admin", n, "enabled", "host", "port", "tokenEnv", "tokenFile");
    boolean enabled = bool("admin.enabled", n.path("enabled"), true);
    String host = optionalText("admin.host", n.path("host")).orElse("127.0.0.1");
    int port = (int) integer("admin.port", n.path("port"), 0, 0, 65535);
    Optional<String> tokenEnv = optionalText("admin.tokenEnv", n.path("tokenEnv"));
    Optional<String> tokenFile = optionalText("admin.tokenFile", n.path("tokenFile"));
    if (tokenEnv.isPresent() && tokenFile.isPresent()) {
      problem("admin.tokenFile", n.path("tokenFile"), "either tokenEnv or tokenFile, not both");
    }
    Optional<AdminToken> token = secret("admin.tokenEnv", tokenEnv, "admin.tokenFile", tokenFile, env,
        "the admin token (at least " + MIN_TOKEN_LENGTH + " characters)").flatMap(t -> {
          if (t.length() < MIN_TOKEN_LENGTH) {
            problems.add((tokenEnv.isPresent() ? "admin.tokenEnv" : "admin.tokenFile") + ": the token has "
                + t.length() + " characters; expected at least " + MIN_TOKEN_LENGTH);
            return Optional.empty();
          }
          return Optional.of(AdminToken.of(t));
        });
    if (enabled && !loopback(host) && token.isEmpty() && tokenEnv.isEmpty() && tokenFile.isEmpty()) {
      problem("admin.host", n.path("host"), "a loopback address (127.0.0.1, ::1, localhost), or tokenEnv or "
          + "tokenFile naming the token every admin request but /health must carry, since " + host
          + " is reachable from other machines");
    }
    return new Admin(enabled, host, port, token);
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

  /**
   * Whether {@code host} names this machine only: a loopback literal or {@code localhost}. Decided
   * from the text, without a name lookup: a name that resolves to loopback today may not tomorrow.
   */
  static boolean loopback(String host) {
    String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    if (h.equalsIgnoreCase("localhost") || h.equals("::1") || h.equals("0:0:0:0:0:0:0:1")) {
      return true;
    }
    String[] parts = h.split("\\.", -1);
    return parts.length == 4 && parts[0].equals("127") && Arrays.stream(parts).allMatch(p -> p.matches("\\d{1,3}"));
  }
}
