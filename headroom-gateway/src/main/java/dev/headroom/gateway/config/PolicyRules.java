package dev.headroom.gateway.config;

import dev.headroom.enforcement.partition.AllowList;
import java.util.Objects;
import java.util.Set;

/**
 * When a policy applies and what it counts, beside its quota:
 * <ul>
 *   <li>{@code allow}: client addresses (CIDR blocks, the address as {@code trustedProxies}
 *       resolve it) and API keys (SHA-256 hex of the key in {@code allow.header}) that bypass
 *       the policy: not counted, not refused ({@link AllowList}, shared with the embedded front ends);
 *   <li>{@code count}: {@code all} requests (default), only {@code failures} (responses 400 and
 *       up: login attempts) or only {@code successes} (below 400). The request is counted when it
 *       is decided, so concurrent attempts are bounded too, and given back when its response
 *       turns out not to count;
 *   <li>{@code when}: the methods and route names the policy applies to (empty: every one);
 *   <li>{@code shadow}: decided, counted, metered and logged, never refusing; {@code shadowFields}
 *       sends its RateLimit fields, an item that would refuse as {@code r=0} with {@code t} the
 *       time until it would allow.
 * </ul>
 */
public record PolicyRules(AllowList allow, CountMode count, Set<String> methods, Set<String> routes, boolean shadow, boolean shadowFields) {

  /** Which responses a policy counts. */
  public enum CountMode {
    ALL, FAILURES, SUCCESSES;

    /** Whether a response with this status counts. */
    public boolean counts(int status) {
      return switch (this) {
        case ALL -> true;
        case FAILURES -> status >= 400;
        case SUCCESSES -> status < 400;
      };
    }
  }

  /** No rules: every request of the policy's routes, counted, enforced. */
  public static final PolicyRules NONE = new PolicyRules(AllowList.NONE, CountMode.ALL,
      Set.of(), Set.of(), false, false);

  public PolicyRules {
    Objects.requireNonNull(allow, "allow");
    methods = Set.copyOf(methods);
    routes = Set.copyOf(routes);
  }

  /** Whether the policy applies to this method on this route ({@code when}). */
  public boolean appliesTo(String method, String route) {
    return (methods.isEmpty() || methods.contains(method)) && (routes.isEmpty() || routes.contains(route));
  }
}
