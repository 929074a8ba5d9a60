package dev.headroom.enforcement;

import java.time.Duration;
import java.util.Objects;

/**
 * When a policy escalates: {@code threshold} refusals of one partition inside the wait it was
 * already given block that partition for {@code block} (Graceful Boundaries section 2, "Retry
 * behavior guidance"; draft-ietf-httpapi-ratelimit-headers-09 section 5.3,
 * {@code abnormal-usage-detected}). Immutable.
 *
 * @param threshold refusals inside the wait that start a block, at least 1
 * @param block how long a blocked partition is refused without asking the store, at least 1 s
 */
public record Escalation(int threshold, Duration block) {

  /**
   * @throws IllegalArgumentException naming the field, the value and what is expected
   */
  public Escalation {
    if (threshold < 1 || threshold > 1_000_000) {
      throw new IllegalArgumentException("escalation.threshold: expected a whole number from 1 to 1000000, got " + threshold);
    }
    Objects.requireNonNull(block, "escalation.block");
    if (block.compareTo(Duration.ofSeconds(1)) < 0 || block.getNano() != 0) {
      throw new IllegalArgumentException("escalation.block: expected a whole number of seconds, at least 1s, got " + block);
    }
  }
}
