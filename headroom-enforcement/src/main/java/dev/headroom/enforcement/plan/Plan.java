package dev.headroom.enforcement.plan;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A named plan ({@code free}, {@code pro}, a customer's contract): the overrides it applies to the
 * service's policies, by policy name, and where a caller reads about it or buys it ({@code url},
 * the {@code upgradeUrl} of the plan before it; Graceful Boundaries section 3). A policy the plan
 * does not name is enforced as configured and its counters are shared with every other plan that
 * leaves it alone. Immutable.
 *
 * @param name letters, digits, {@code -} and {@code _}, starting with a letter, at most 32
 * @param policies the overrides by policy name, in the order given
 * @param url the plan's page, relative or on the service's origin; empty when none
 */
public record Plan(String name, Map<String, PolicyOverride> policies, Optional<String> url) {

  /** Longest plan name: it becomes part of policy names ({@code api:pro}), which are sent in headers. */
  public static final int MAX_NAME_LENGTH = 32;

  private static final Pattern NAME = Pattern.compile("[A-Za-z][A-Za-z0-9_-]{0," + (MAX_NAME_LENGTH - 1) + "}");

  public Plan {
    if (name == null || !NAME.matcher(name).matches()) {
      throw new IllegalArgumentException("plan name: expected 1 to " + MAX_NAME_LENGTH
          + " letters, digits, - or _ starting with a letter, got " + (name == null ? "nothing" : "'" + name + "'"));
    }
    Objects.requireNonNull(policies, "policies");
    Objects.requireNonNull(url, "url");
    policies = Collections.unmodifiableMap(new LinkedHashMap<>(policies));
  }
}
