package dev.headroom.gateway.config;

import java.util.Optional;

/**
 * What a request of a route costs, in units of its {@code requests} policies: {@code cost} (1 by
 * default); or the value of the request header {@code header} (a whole number from 0 to
 * {@code max}; absent: {@code cost}); and, after the response, the value of the response header
 * {@code chargeHeader} (0 to {@code max}) charged on top, as content bytes are.
 */
public record RouteCost(long units, Optional<String> header, long max, Optional<String> chargeHeader) {
  /** One unit a request, nothing after. */
  public static final RouteCost ONE = new RouteCost(1, Optional.empty(), 1, Optional.empty());
}
