package dev.headroom.gateway.internal.proxy;

import dev.headroom.gateway.GatewayConfig;
import dev.headroom.gateway.config.Route;
import dev.headroom.http.path.PathTemplate;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The routes in configuration order. A request matches the first route whose template (the one
 * grammar of {@link PathTemplate}, on the raw path of the request line) matches its path and which accepts its method (a GET route accepts HEAD, RFC 9110 section 9.3.2: the same
 * request without content, limited by the same policies); when some route matches the path but none the method, the
 * answer is 405 with the methods that would have matched. Immutable and thread-safe.
 */
public final class RouteTable {
  private final List<CompiledRoute> routes;

  /** The routes of {@code config}, decided by {@code gate}. */
  public RouteTable(GatewayConfig config, HttpVocabulary vocabulary, ConfiguredGate gate) {
    List<CompiledRoute> out = new ArrayList<>();
    for (Route r : config.routes()) {
      out.add(new CompiledRoute(r, PathTemplate.parse(r.path()),
          r.policies().stream().map(config.policies()::get).toList(), vocabulary.headers(r),
          gate == null ? null : gate.rules(r).orElse(null)));
    }
    this.routes = List.copyOf(out);
  }

  /** The routes of {@code config} for matching alone: none has rules. */
  RouteTable(GatewayConfig config, HttpVocabulary vocabulary) {
    this(config, vocabulary, null);
  }

  List<CompiledRoute> routes() {
    return routes;
  }

  /** The outcome of matching one request. */
  sealed interface Match permits Found, WrongMethod, NotFound {}

  record Found(CompiledRoute route) implements Match {}

  record WrongMethod(Set<String> allowed) implements Match {}

  record NotFound() implements Match {}

  Match match(String method, String path) {
    Set<String> allowed = null;
    for (CompiledRoute r : routes) {
      if (r.template().matches(path)) {
        if (r.hasMethod(method) || (method.equals("HEAD") && r.hasMethod("GET"))) {
          return new Found(r);
        }
        if (allowed == null) {
          allowed = new TreeSet<>();
        }
        allowed.addAll(r.route().methods());
        if (r.hasMethod("GET")) {
          allowed.add("HEAD");
        }
      }
    }
    return allowed == null ? new NotFound() : new WrongMethod(allowed);
  }

  Optional<CompiledRoute> byName(String name) {
    return routes.stream().filter(r -> r.route().name().equals(name)).findFirst();
  }
}
