package dev.headroom.servlet.internal;

import dev.headroom.enforcement.GateRequest;
import jakarta.servlet.http.HttpServletRequest;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * A servlet request as headroom-enforcement's gate and partition derivations see it. The user is
 * resolved once, lazily, by the host's callback. Used on the request thread only.
 */
public final class ServletRequestView implements GateRequest {

  /** Most field lines of one header read; more lines are treated as a malformed (missing) input. */
  static final int MAX_LINES = 32;

  private final HttpServletRequest request;
  private final String path;
  private final String route;
  private final Function<HttpServletRequest, Optional<String>> users;
  private Optional<String> user;

  public ServletRequestView(HttpServletRequest request, String path, String route,
      Function<HttpServletRequest, Optional<String>> users) {
    this.request = Objects.requireNonNull(request, "request");
    this.path = path;
    this.route = route;
    this.users = users;
  }

  @Override
  public Optional<String> remoteAddress() {
    return Optional.ofNullable(request.getRemoteAddr());
  }

  @Override
  public String method() {
    return request.getMethod();
  }

  @Override
  public String path() {
    return path;
  }

  @Override
  public Optional<String> route() {
    return Optional.ofNullable(route);
  }

  @Override
  public List<String> headers(String name) {
    Enumeration<String> e = request.getHeaders(name);
    if (e == null || !e.hasMoreElements()) {
      return List.of();
    }
    List<String> values = new ArrayList<>(1);
    while (e.hasMoreElements() && values.size() <= MAX_LINES) {
      values.add(e.nextElement());
    }
    return values;
  }

  @Override
  public Optional<String> user() {
    if (user == null) {
      Optional<String> u = users.apply(request);
      user = u == null ? Optional.empty() : u;
    }
    return user;
  }

  @Override
  public String target() {
    String query = request.getQueryString();
    return request.getRequestURI() + (query == null ? "" : "?" + query);
  }

  @Override
  public String toString() {
    return request.getMethod() + " " + path + " from " + request.getRemoteAddr();
  }
}
