package dev.headroom.enforcement.settings;

import java.time.Duration;

/**
 * A policy's queue in the settings model (headroom-enforcement's {@code Waiting}): a request the
 * policy refuses with a Retry-After of at most {@code maxWait} waits for its turn, first come first
 * served within its partition, instead of being refused at once. Present, it turns the queue on;
 * {@code maxWait} is then required. The gateway's {@code policies.NAME.queue}, Spring Boot's
 * {@code headroom.policies.NAME.queue.*}.
 *
 * <p>Mutable, for binders.
 */
public class QueueSettings {

  /** The longest a refused request waits for its turn, from its first refusal, such as 500ms; above 0 and at most 1h; required. */
  private Duration maxWait;

  /** How many requests of the policy may wait at once, across its partitions; 1 to 1000000; 1000 by default. */
  private Integer maxQueued;

  public Duration getMaxWait() {
    return maxWait;
  }

  public void setMaxWait(Duration maxWait) {
    this.maxWait = maxWait;
  }

  public Integer getMaxQueued() {
    return maxQueued;
  }

  public void setMaxQueued(Integer maxQueued) {
    this.maxQueued = maxQueued;
  }
}
