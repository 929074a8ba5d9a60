package dev.headroom.spring.boot;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Applies policies from {@code headroom.policies} to a Spring MVC or Spring WebFlux handler method
 * (or every handler method of a controller): the method's request mappings (paths and methods)
 * become Headroom routes, enforced by the Headroom filter (servlet) or web filter (WebFlux) and
 * listed in the discovery document.
 *
 * <pre>{@code
 * @GetMapping("/api/items/{id}")
 * @RateLimited({"per-client", "daily"})
 * Item item(@PathVariable String id) { ... }
 * }</pre>
 *
 * <p>Annotated routes are matched after the {@code headroom.routes} of the configuration, the most
 * specific path pattern first. A policy name that {@code headroom.policies} does not define stops
 * startup naming the handler method.
 *
 * <p>The policies apply only to requests this handler method serves. The Headroom filter runs
 * before Spring MVC's {@code DispatcherServlet} (WebFlux's {@code DispatcherHandler}), so for a
 * request matching the annotated path template it asks the application's handler mappings, in
 * the dispatcher's order, which handler will run: an unannotated handler with a more specific pattern (such as
 * {@code /api/items/health} beside {@code /api/items/{id}}) or chosen by a mapping condition
 * ({@code params}, {@code headers}, {@code consumes}, {@code produces}) is not limited by this
 * annotation. A request Spring refuses itself (405, 406, 415) runs no handler and is not limited.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE})
public @interface RateLimited {

  /** Names of policies from {@code headroom.policies}, decided together. */
  String[] value();

  /** Header dialects for this endpoint (ietf, ietf-next, draft-09, draft-07, draft-06, draft-03, x-ratelimit); headroom.dialects when empty. */
  String[] dialects() default {};

  /** The endpoint key in the discovery document; {@code METHOD path} when empty. */
  String key() default "";

  /** Additional context for the discovery document. */
  String note() default "";

  /** Whether the discovery document lists the endpoint. */
  boolean listed() default true;
}
