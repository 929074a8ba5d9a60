package dev.headroom.enforcement;

import dev.headroom.enforcement.partition.AllowList;
import dev.headroom.enforcement.partition.ClientAddressResolver;
import dev.headroom.enforcement.partition.RequestView;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The gate's allow lists by policy name ({@link GateBuilder#allow}): callers that
 * bypass a policy, matched by {@link AllowList} (the gateway's implementation) with
 * the gate's {@link ClientAddressResolver}, so that a CIDR block is matched against the client
 * address as the trusted proxies resolve it. A policy is named as configured (a plan's variant
 * {@code api:pro} follows the list of {@code api}). Immutable.
 */
final class AllowLists {
  private final Map<String, AllowList> byPolicy;
  private final ClientAddressResolver addresses;

  AllowLists(Map<String, AllowList> byPolicy, ClientAddressResolver addresses) {
    this.byPolicy = Map.copyOf(byPolicy);
    this.addresses = addresses;
  }

  /**
   * Checks that every list names a policy of the filter's routes.
   *
   * @throws IllegalArgumentException naming the policy and the policies there are
   */
  void check(Set<String> policies) {
    for (String name : byPolicy.keySet()) {
      if (!policies.contains(name)) {
        throw new IllegalArgumentException("allow: policy '" + name + "' is not a policy of any route; expected one of "
            + new TreeSet<>(policies));
      }
    }
  }

  /** Whether the request bypasses the policy of this name. */
  boolean bypasses(String policy, RequestView request) {
    if (byPolicy.isEmpty()) {
      return false;
    }
    AllowList list = byPolicy.get(policy);
    return list != null && list.bypasses(request, addresses);
  }
}
