package dev.headroom.gateway.internal.config;

import com.fasterxml.jackson.databind.JsonNode;
import dev.headroom.gateway.config.Upstream;
import dev.headroom.gateway.config.UpstreamTls;
import dev.headroom.http.IoFailure;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Reads {@code upstreams}: the origin servers by name, each an {@code http://host:port}, an
 * {@code https://host:port} (with its optional {@code tls}: {@code trustedCa}, {@code certificate}
 * and {@code key}, PEM files read here, once, by {@link PemFile}) or the demo.
 */
final class UpstreamReader extends SectionReader {
  private static final String URL_EXPECTED =
      "an http://host:port or https://host:port URL without path, query or user info";

  UpstreamReader(List<String> problems, Path folder) {
    super(problems, folder);
  }

  Map<String, Upstream> upstreams(JsonNode n) {
    Map<String, Upstream> out = new LinkedHashMap<>();
    if (n.isMissingNode() || !n.isObject() || n.isEmpty()) {
      problem("upstreams", n, "a mapping of one or more upstream names to {url: http://host:port} or {url: https://host:port}");
      return out;
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      String path = "upstreams." + e.getKey();
      JsonNode u = e.getValue();
      if (!object(path, u)) {
        continue;
      }
      keys(path, u, "url", "demo", "maxConnections", "tls");
      boolean demo = bool(path + ".demo", u.path("demo"), false);
      int maxConnections = (int) integer(path + ".maxConnections", u.path("maxConnections"), 256, 1, 65536);
      String host = "127.0.0.1";
      int port = 0;
      boolean https = false;
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
        if (uri == null || !("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))
            || uri.getHost() == null
            || (uri.getPath() != null && !uri.getPath().isEmpty() && !uri.getPath().equals("/"))
            || uri.getQuery() != null || uri.getUserInfo() != null) {
          problem(path + ".url", url, URL_EXPECTED);
        } else {
          https = "https".equals(uri.getScheme());
          host = uri.getHost();
          if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1); // an IPv6 literal: the address, as TLS checks it against the certificate
          }
          port = uri.getPort() != -1 ? uri.getPort() : https ? 443 : 80;
        }
      }
      Optional<UpstreamTls> tls = Optional.empty();
      JsonNode t = u.path("tls");
      if (https) {
        tls = Optional.of(tls(path + ".tls", t));
      } else if (!t.isMissingNode()) {
        problem(path + ".tls", t, "no tls unless url is https://host:port (tls says how the gateway speaks TLS to"
            + " an https upstream)");
      }
      out.put(e.getKey(), new Upstream(e.getKey(), host, port, demo, maxConnections, tls));
    }
    return out;
  }

  /** {@code tls}: each file read and checked now, so that a bad one stops the load with its name. */
  private UpstreamTls tls(String path, JsonNode t) {
    UpstreamTls tls = UpstreamTls.jdkTrust();
    if (t.isMissingNode()) {
      return tls;
    }
    if (!object(path, t)) {
      return tls;
    }
    keys(path, t, "trustedCa", "certificate", "key");
    Optional<String> ca = optionalText(path + ".trustedCa", t.path("trustedCa"));
    Optional<String> cert = optionalText(path + ".certificate", t.path("certificate"));
    Optional<String> key = optionalText(path + ".key", t.path("key"));
    if (ca.isPresent()) {
      Optional<Path> f = path(path + ".trustedCa", ca.get());
      Optional<List<X509Certificate>> cas = f.flatMap(p -> read(path + ".trustedCa", p,
          "a PEM file of one or more CERTIFICATE blocks (the certificate authorities to trust)", PemFile::certificates));
      if (cas.isPresent()) {
        tls = tls.withTrustedCa(f.get(), cas.get());
      }
    }
    if (cert.isPresent() != key.isPresent()) {
      String missing = cert.isPresent() ? ".key" : ".certificate";
      problems.add(path + missing + ": missing; expected both tls.certificate and tls.key (a client certificate"
          + " and its private key, as PEM files) or neither");
    } else if (cert.isPresent()) {
      Optional<Path> cf = path(path + ".certificate", cert.get());
      Optional<Path> kf = path(path + ".key", key.get());
      Optional<List<X509Certificate>> chain = cf.flatMap(p -> read(path + ".certificate", p,
          "a PEM file of the client certificate (then its chain), as CERTIFICATE blocks", PemFile::certificates));
      Optional<PrivateKey> pk = kf.flatMap(p -> read(path + ".key", p,
          "a PEM file of the client certificate's unencrypted private key (PKCS#8 PRIVATE KEY, RSA PRIVATE KEY or"
              + " EC PRIVATE KEY)", PemFile::privateKey));
      if (chain.isPresent() && pk.isPresent()) {
        if (matches(pk.get(), chain.get().get(0))) {
          tls = tls.withClientCertificate(cf.get(), chain.get(), kf.get(), pk.get());
        } else {
          problems.add(path + ".key: \"" + kf.get() + "\" is not the private key of the certificate in \""
              + cf.get() + "\"; expected the key the certificate was issued for");
        }
      }
    }
    return tls;
  }

  private Optional<Path> path(String path, String name) {
    try {
      return Optional.of(file(name));
    } catch (InvalidPathException e) {
      problems.add(path + ": \"" + name + "\" is not a file path; expected the path of a PEM file");
      return Optional.empty();
    }
  }

  private interface PemRead<T> {
    T read(Path file) throws IOException;
  }

  /** Reads {@code file}; a problem naming the field, the file and what was expected when it cannot. */
  private <T> Optional<T> read(String path, Path file, String expected, PemRead<T> reader) {
    try {
      return Optional.of(reader.read(file));
    } catch (NoSuchFileException e) {
      problems.add(path + ": \"" + file + "\" does not exist; expected " + expected);
    } catch (AccessDeniedException e) {
      problems.add(path + ": \"" + file + "\" cannot be read (permission denied); expected " + expected);
    } catch (IOException e) {
      // PemFile's messages say what the file holds instead, never quoting it
      String why = e.getClass() == IOException.class ? e.getMessage() : IoFailure.inWords(e);
      problems.add(path + ": \"" + file + "\" is not usable (" + why + "); expected " + expected);
    }
    return Optional.empty();
  }

  /** Whether {@code key} is the private key of {@code cert}: a signature by one verifies with the other. */
  private static boolean matches(PrivateKey key, X509Certificate cert) {
    String algorithm = switch (key.getAlgorithm()) {
      case "RSA" -> "SHA256withRSA";
      case "EC" -> "SHA256withECDSA";
      case "RSASSA-PSS" -> null; // its parameters live in the key; the handshake itself will tell
      default -> key.getAlgorithm(); // Ed25519, Ed448: the algorithm is its own signature
    };
    if (algorithm == null) {
      return true;
    }
    try {
      byte[] probe = "headroom upstream client key check".getBytes(StandardCharsets.US_ASCII);
      Signature s = Signature.getInstance(algorithm);
      s.initSign(key, new SecureRandom());
      s.update(probe);
      byte[] sig = s.sign();
      Signature v = Signature.getInstance(algorithm);
      v.initVerify(cert.getPublicKey());
      v.update(probe);
      return v.verify(sig);
    } catch (GeneralSecurityException e) {
      return false; // e.g. an EC key beside an RSA certificate
    }
  }
}
