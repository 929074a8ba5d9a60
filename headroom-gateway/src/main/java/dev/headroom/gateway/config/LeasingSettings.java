package dev.headroom.gateway.config;

import java.time.Duration;
import java.util.List;

/**
 * Quota leasing for the Redis store ({@code dev.headroom.redis.LeasingStore}): the policies
 * leased by name (empty: every fixed-window and token-bucket policy) and the slice options of
 * {@code dev.headroom.redis.Leasing}.
 */
public record LeasingSettings(List<String> policies, Duration targetInterval, double maxFraction, Duration maxHold,
    Duration idleReturn, int maxKeys) {
  public LeasingSettings {
    policies = List.copyOf(policies);
  }
}
