package dev.headroom.webflux;

import java.security.Principal;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Who the user of a request is, for {@code user} partitions: resolved without blocking, before the
 * gate is asked. Empty for an anonymous request.
 */
@FunctionalInterface
public interface ReactiveUserResolver {

  /** The user's identifier, or empty; must not block. */
  Mono<String> user(ServerWebExchange exchange);

  /** The exchange's principal's name (set by Spring Security, or the server). */
  static ReactiveUserResolver principal() {
    return exchange -> exchange.getPrincipal().map(Principal::getName);
  }

  /** Nobody: every request is anonymous, and no principal is looked up. */
  static ReactiveUserResolver none() {
    return exchange -> Mono.empty();
  }
}
