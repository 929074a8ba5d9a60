package dev.headroom.servlet;

import jakarta.servlet.http.HttpServletRequest;
import java.security.Principal;
import java.util.Optional;

/**
 * Who the authenticated user of a request is, as the host application knows it: the input of
 * {@code user} partitions. Headroom never authenticates; it counts whatever the host says here
 * (headroom-enforcement {@code RequestView#user()}).
 *
 * <p>Implementations are called on the request thread, after any authentication filter placed
 * before Headroom's, and must be thread-safe.
 */
@FunctionalInterface
public interface UserResolver {

  /** The user, or empty when the request is anonymous. */
  Optional<String> user(HttpServletRequest request);

  /** The container's authenticated principal ({@link HttpServletRequest#getUserPrincipal()}). */
  static UserResolver principal() {
    return request -> Optional.ofNullable(request.getUserPrincipal()).map(Principal::getName);
  }
}
