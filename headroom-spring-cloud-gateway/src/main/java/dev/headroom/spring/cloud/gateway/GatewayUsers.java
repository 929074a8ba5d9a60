package dev.headroom.spring.cloud.gateway;

import java.security.Principal;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Who the user of a request is, for {@code user} partitions: the application says, as a
 * {@link Mono} (empty for an anonymous request), never blocking. A bean of this type replaces the
 * default, the exchange's principal (Spring Security's, when present).
 */
@FunctionalInterface
public interface GatewayUsers {

  /** The user of the request, or empty. */
  Mono<String> user(ServerWebExchange exchange);

  /** The exchange's principal's name. */
  static GatewayUsers principal() {
    return exchange -> exchange.getPrincipal().map(Principal::getName);
  }
}
