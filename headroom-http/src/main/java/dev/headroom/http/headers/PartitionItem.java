package dev.headroom.http.headers;

import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A member of {@code RateLimit-Partition}, the field the editor's draft after
 * draft-ietf-httpapi-ratelimit-headers-11 adds (ietf-wg-httpapi/ratelimit-headers pull request
 * 166): a policy identifier whose parameters name the dimensions its partitions are keyed by
 * ({@code "daily";user_id;method}), a dimension with a value restricting the policy to requests
 * that carry that value ({@code method="POST"}).
 *
 * <p>The pull request describes the field in these words: "declares partition dimensions as
 * parameters on policy identifiers, with fixed-value filtering support", registering the
 * dimensions {@code user_id}, {@code client_id} and {@code method}. Its full grammar could not be
 * read here, so Headroom reads a Boolean {@code true} parameter as a dimension and a String or
 * Token parameter as a fixed value, and ignores any other parameter, as the draft says of unknown
 * parameters.
 *
 * @param name the policy identifier, as in {@code RateLimit-Policy}
 * @param dimensions the dimensions whose request values key the partition
 * @param fixed dimensions with the one value the policy applies to
 */
public record PartitionItem(String name, Set<String> dimensions, Map<String, String> fixed) {

  /** @throws IllegalArgumentException naming the field when the name is not a valid identifier */
  public PartitionItem {
    name = ItemChecks.name(name);
    dimensions = Set.copyOf(Objects.requireNonNull(dimensions, "dimensions"));
    fixed = Map.copyOf(Objects.requireNonNull(fixed, "fixed"));
  }
}
