package dev.headroom.http;

import dev.headroom.PartitionKey;
import dev.headroom.QuotaPolicy;
import java.util.Optional;

/**
 * Decides what, if anything, is sent as the {@code pk} parameter for a policy and partition
 * (draft-ietf-httpapi-ratelimit-headers-09 sections 3.1.4, 4.1.3 and 6.1). Never a raw credential:
 * implementations expose nothing, a predictable hash, or a keyed HMAC of the partition.
 *
 * <p>Implementations are thread-safe.
 */
@FunctionalInterface
public interface PartitionKeyExposure {

  /** The bytes to send as {@code pk}, or empty to send no {@code pk}. */
  Optional<byte[]> pk(QuotaPolicy policy, PartitionKey key);

  /**
   * Whether this exposure may ever send a {@code pk}. When it cannot, the fields written for a
   * decision do not depend on who was limited, only on the numbers, and an emitter may reuse them
   * ({@link dev.headroom.http.headers.RateLimitHeaders#numbersOnly()}). Implementations that can
   * send one keep the default, true.
   */
  default boolean mayExpose() {
    return true;
  }

  /** Sends no {@code pk}: the default. */
  static PartitionKeyExposure off() {
    return NoPartitionKeyExposure.INSTANCE;
  }
}
