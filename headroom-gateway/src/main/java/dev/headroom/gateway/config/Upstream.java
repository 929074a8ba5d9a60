package dev.headroom.gateway.config;

import java.util.Optional;

/**
 * An origin server: {@code upstreams.NAME.url} ({@code http://host:port}, or
 * {@code https://host:port} with {@code tls}), or {@code demo}, which starts the built-in demo
 * upstream in-process on a loopback port instead of naming a host and port.
 *
 * @param port the URL's port, or its scheme's default (80 for http, 443 for https)
 * @param tls how TLS is spoken to it: present exactly when the URL is {@code https://}
 */
public record Upstream(String name, String host, int port, boolean demo, int maxConnections, Optional<UpstreamTls> tls) {

  /** A plain-HTTP upstream (or the demo). */
  public Upstream(String name, String host, int port, boolean demo, int maxConnections) {
    this(name, host, port, demo, maxConnections, Optional.empty());
  }

  /** The URL's scheme: {@code https} when TLS is spoken to it, else {@code http}. */
  public String scheme() {
    return tls.isPresent() ? "https" : "http";
  }
}
