package dev.headroom.gateway.internal.config;

import com.fasterxml.jackson.databind.JsonNode;
import dev.headroom.gateway.config.Upstream;
import dev.headroom.gateway.config.UpstreamTls;
import dev.headroom.gateway.internal.tls.PemFiles;
import dev.headroom.gateway.internal.tls.TlsFileException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Reads {@code upstreams}: the origin servers by name, each an {@code http://host:port}, an
 * {@code https://host:port} (with its optional {@code tls}: {@code trustedCa}, {@code certificate}
 * and {@code key}, PEM files read here, once, by {@link PemFiles}, the reader of the listener's
 * files too) or the demo.
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
      Optional<List<X509Certificate>> cas = f.flatMap(p -> read(() -> PemFiles.certificates(path + ".trustedCa", p)));
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
      Optional<List<X509Certificate>> chain = cf.flatMap(p -> read(() -> PemFiles.certificates(path + ".certificate", p)));
      // the key is read even without a usable certificate, so that its own problems are told too
      Optional<PrivateKey> pk = kf.flatMap(p -> read(() -> chain.isPresent()
          ? PemFiles.privateKeyOf(path + ".key", p, cf.get(), chain.get().get(0))
          : PemFiles.privateKey(path + ".key", p)));
      if (chain.isPresent() && pk.isPresent()) {
        tls = tls.withClientCertificate(cf.get(), chain.get(), kf.get(), pk.get());
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

  /** What {@code reader} reads; empty, and its one-line problem added, when the file cannot serve. */
  private <T> Optional<T> read(Supplier<T> reader) {
    try {
      return Optional.of(reader.get());
    } catch (TlsFileException e) {
      problems.add(e.getMessage());
      return Optional.empty();
    }
  }
}
