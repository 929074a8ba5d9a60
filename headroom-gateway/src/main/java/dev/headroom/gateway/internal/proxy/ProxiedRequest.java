package dev.headroom.gateway.internal.proxy;

import dev.headroom.enforcement.GateRequest;
import dev.headroom.enforcement.partition.PeerKeys;
import io.netty.handler.codec.http.HttpRequest;
import java.util.List;
import java.util.Optional;

/**
 * A request the gateway forwards, as headroom-http's {@link GateRequest} sees it: its method, its
 * path (up to the query, as the route table matched it), its header fields, the peer's address
 * (the client address the trusted proxies resolve from) and the keys derived from it alone, both
 * kept per connection, the subject of the client's TLS certificate (read once per connection), and no user (the gateway runs outside the
 * application, so it knows none). Read on the connection's event loop, and by the gate on whatever
 * thread decides; the request head is not changed meanwhile.
 */
final class ProxiedRequest implements GateRequest {
  private final HttpRequest request;
  private final String path;
  private final ProxyHandler conn;

  /** A request on {@code conn}; null for a request looked at before it has one (the discovery document's). */
  ProxiedRequest(HttpRequest request, String path, ProxyHandler conn) {
    this.request = request;
    this.path = path;
    this.conn = conn;
  }

  @Override
  public Optional<String> remoteAddress() {
    return conn == null ? Optional.empty() : conn.peerLiteral();
  }

  @Override
  public PeerKeys peerKeys() {
    return conn == null ? PeerKeys.NONE : conn.peerKeys();
  }

  @Override
  public String method() {
    return request.method().name();
  }

  @Override
  public String path() {
    return path;
  }

  @Override
  public Optional<String> route() {
    return Optional.empty();
  }

  @Override
  public List<String> headers(String name) {
    return request.headers().getAll(name);
  }

  @Override
  public String header(String name) {
    return request.headers().get(name);
  }

  @Override
  public Optional<String> clientCertificateSubject() {
    return conn == null ? Optional.empty() : conn.transport().certificateSubject();
  }

  @Override
  public Optional<String> user() {
    return Optional.empty();
  }

  @Override
  public String target() {
    return request.uri();
  }

  @Override
  public String toString() {
    return request.method() + " " + request.uri();
  }
}
