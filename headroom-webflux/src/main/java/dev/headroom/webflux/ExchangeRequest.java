package dev.headroom.webflux;

import dev.headroom.enforcement.GateRequest;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.List;
import java.util.Optional;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.RequestPath;
import org.springframework.http.server.reactive.ServerHttpRequest;

/**
 * A WebFlux request as headroom-enforcement's gate and partition derivations see it: the path within
 * the application with each segment percent-decoded (as a servlet container maps it, matrix parameters
 * left out), the peer address, the header lines, and the user resolved before the gate is asked.
 * Used by one thread at a time.
 */
final class ExchangeRequest implements GateRequest {

  /** Most field lines of one header read; more lines are treated as a malformed (missing) input. */
  static final int MAX_LINES = 32;

  private final ServerHttpRequest request;
  private final String path;
  private final Optional<String> user;

  ExchangeRequest(ServerHttpRequest request, Optional<String> user) {
    this.request = request;
    this.path = decodedPath(request.getPath());
    this.user = user;
  }

  /** The path within the application, each segment percent-decoded; {@code /} when empty. */
  static String decodedPath(RequestPath path) {
    StringBuilder b = new StringBuilder();
    for (PathContainer.Element e : path.pathWithinApplication().elements()) {
      if (e instanceof PathContainer.PathSegment) {
        b.append(((PathContainer.PathSegment) e).valueToMatch());
      } else {
        b.append('/');
      }
    }
    return b.length() == 0 ? "/" : b.toString();
  }

  @Override
  public Optional<String> remoteAddress() {
    InetSocketAddress a = request.getRemoteAddress();
    if (a == null || a.getAddress() == null) {
      return Optional.empty();
    }
    return Optional.of(a.getAddress().getHostAddress());
  }

  @Override
  public String method() {
    return request.getMethod().name();
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
    List<String> values = HeaderValues.of(request.getHeaders(), name);
    if (values.isEmpty()) {
      return List.of();
    }
    return values.size() <= MAX_LINES + 1 ? values : values.subList(0, MAX_LINES + 1);
  }

  @Override
  public Optional<String> user() {
    return user;
  }

  @Override
  public String target() {
    URI uri = request.getURI();
    String raw = uri.getRawPath();
    return (raw == null || raw.isEmpty() ? "/" : raw) + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
  }

  @Override
  public String toString() {
    return method() + " " + path + " from " + remoteAddress().orElse("?");
  }
}
