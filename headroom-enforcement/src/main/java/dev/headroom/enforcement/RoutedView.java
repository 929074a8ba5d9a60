package dev.headroom.enforcement;

import dev.headroom.enforcement.partition.PeerKeys;
import java.util.List;
import java.util.Optional;

/** A {@link GateRequest} with the template of the route it matched. Used by one thread at a time. */
final class RoutedView implements GateRequest {
  private final GateRequest request;
  private final String route;

  RoutedView(GateRequest request, String route) {
    this.request = request;
    this.route = route;
  }

  @Override
  public Optional<String> remoteAddress() {
    return request.remoteAddress();
  }

  @Override
  public String method() {
    return request.method();
  }

  @Override
  public String path() {
    return request.path();
  }

  @Override
  public Optional<String> route() {
    return Optional.of(route);
  }

  @Override
  public List<String> headers(String name) {
    return request.headers(name);
  }

  @Override
  public Optional<String> user() {
    return request.user();
  }

  @Override
  public Optional<String> clientCertificateSubject() {
    return request.clientCertificateSubject();
  }

  @Override
  public PeerKeys peerKeys() {
    return request.peerKeys();
  }

  @Override
  public String target() {
    return request.target();
  }

  @Override
  public String toString() {
    return request.toString();
  }
}
