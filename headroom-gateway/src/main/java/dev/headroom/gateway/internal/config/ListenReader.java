package dev.headroom.gateway.internal.config;

import com.fasterxml.jackson.databind.JsonNode;
import dev.headroom.enforcement.partition.CidrRange;
import dev.headroom.gateway.config.Admin;
import dev.headroom.gateway.config.AdminToken;
import dev.headroom.gateway.config.Listen;
import dev.headroom.gateway.config.ListenTls;
import dev.headroom.gateway.internal.tls.TlsFileException;
import dev.headroom.gateway.internal.tls.TlsMaterial;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * Reads where the gateway is reached and by whom: {@code listen} (with its TLS), {@code admin} and
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
    keys("listen", n, "host", "port", "tls", "http2");
    String host = optionalText("listen.host", n.path("host")).orElse("127.0.0.1");
    int port = (int) integer("listen.port", n.path("port"), 8080, 0, 65535);
    Optional<ListenTls> tls = tls(n.path("tls"));
    // HTTP/2 is on by default where TLS is (offered by ALPN, so HTTP/1.1 clients are unaffected),
    // off by default on cleartext
    boolean http2 = bool("listen.http2", n.path("http2"), tls.isPresent() || !n.path("tls").isMissingNode());
    return new Listen(host, port, tls, http2);
  }

  /**
   * {@code listen.tls: {certificate: FILE, key: FILE, protocols: [TLSv1.3, TLSv1.2], clientAuth:
   * none|optional|required, clientCa: FILE}}. The files are read here too, so that a certificate
   * that is not PEM, or a key that does not match it, is a problem of the configuration (one line
   * naming the file), found before anything listens.
   */
  private Optional<ListenTls> tls(JsonNode n) {
    if (n.isMissingNode()) {
      return Optional.empty();
    }
    if (!object("listen.tls", n)) {
      return Optional.empty();
    }
    keys("listen.tls", n, "certificate", "key", "protocols", "clientAuth", "clientCa");
    Path certificate = tlsFile("listen.tls.certificate", n.path("certificate"), "the PEM certificate chain");
    Path key = tlsFile("listen.tls.key", n.path("key"), "the PEM private key of the certificate");
    List<String> protocols = new ArrayList<>();
    JsonNode p = n.path("protocols");
    if (p.isMissingNode()) {
      protocols.addAll(ListenTls.DEFAULT_PROTOCOLS);
    } else if (!p.isArray() || p.isEmpty()) {
      problem("listen.tls.protocols", p, "a list of one or more of " + ListenTls.KNOWN_PROTOCOLS);
    } else {
      for (int i = 0; i < p.size(); i++) {
        JsonNode e = p.get(i);
        if (!e.isTextual() || !ListenTls.KNOWN_PROTOCOLS.contains(e.asText())) {
          problem("listen.tls.protocols[" + i + "]", e, "one of " + ListenTls.KNOWN_PROTOCOLS);
        } else if (!protocols.contains(e.asText())) {
          protocols.add(e.asText());
        }
      }
    }
    ListenTls.ClientAuth clientAuth = ListenTls.ClientAuth.NONE;
    JsonNode ca = n.path("clientAuth");
    if (!ca.isMissingNode()) {
      clientAuth = null;
      for (ListenTls.ClientAuth a : ListenTls.ClientAuth.values()) {
        if (ca.isTextual() && a.token().equals(ca.asText())) {
          clientAuth = a;
        }
      }
      if (clientAuth == null) {
        problem("listen.tls.clientAuth", ca, "none, optional (ask for a certificate) or required");
      }
    }
    Optional<Path> clientCa = Optional.empty();
    if (clientAuth == null) {
      return Optional.empty(); // whether clientCa belongs depends on what clientAuth meant
    }
    if (!n.path("clientCa").isMissingNode()) {
      clientCa = Optional.ofNullable(tlsFile("listen.tls.clientCa", n.path("clientCa"),
          "the PEM certificates client certificates are verified against"));
      if (clientAuth == ListenTls.ClientAuth.NONE) {
        problem("listen.tls.clientCa", n.path("clientCa"), "no clientCa when clientAuth is none (or clientAuth "
            + "optional or required)");
      }
    } else if (clientAuth != ListenTls.ClientAuth.NONE) {
      problem("listen.tls.clientCa", n.path("clientCa"), "a PEM file of the CA certificates client certificates "
          + "are verified against, because clientAuth is " + clientAuth.token());
    }
    if (certificate == null || key == null || protocols.isEmpty()
        || (clientAuth != ListenTls.ClientAuth.NONE && clientCa.isEmpty())) {
      return Optional.empty();
    }
    ListenTls tls = new ListenTls(certificate, key, protocols, clientAuth, clientCa);
    try {
      TlsMaterial.read(tls);
    } catch (TlsFileException e) {
      problems.add(e.getMessage());
    }
    return Optional.of(tls);
  }

  private Path tlsFile(String path, JsonNode n, String expected) {
    String name = requiredText(path, n, "a file path: " + expected);
    if (name == null) {
      return null;
    }
    try {
      return file(name);
    } catch (IllegalArgumentException e) {
      problem(path, n, "a file path: " + expected);
      return null;
    }
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
