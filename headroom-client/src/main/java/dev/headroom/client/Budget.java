package dev.headroom.client;

import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What the client believes about one quota at one instant: for a policy (and partition key) of one
 * scope, the units it may still send and when the quota resets.
 *
 * @param policy the policy identifier; for dialects without one, the dialect's token
 *     ({@code draft-07}, {@code x-ratelimit}, ...), for discovery {@code endpointKey#index}
 * @param partitionKey the {@code pk} in base64, when the server sent one
 * @param remaining units the client will still send before the reset (its own count since the last report)
 * @param reset time until the reset, clamped by {@link Ceilings#maxReset()}
 * @param quota the quota, when known from RateLimit-Policy, the expiring limit or discovery
 * @param window the window, when known
 * @param source where the numbers came from: {@code headers}, {@code discovery} or {@code observed}
 * @param unit the quota unit {@code remaining} and {@code quota} count, lower case: {@code requests},
 *     or what the server meters besides ({@code tokens}, ...: see {@link RequestCost})
 */
public record Budget(String policy, Optional<String> partitionKey, long remaining, Duration reset,
    OptionalLong quota, Optional<Duration> window, String source, String unit) {

  /** A budget of {@code requests}. */
  public Budget(String policy, Optional<String> partitionKey, long remaining, Duration reset, OptionalLong quota,
      Optional<Duration> window, String source) {
    this(policy, partitionKey, remaining, reset, quota, window, source, RequestCost.REQUESTS);
  }
}
