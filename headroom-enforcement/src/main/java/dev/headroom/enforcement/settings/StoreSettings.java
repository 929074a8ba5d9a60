package dev.headroom.enforcement.settings;

import java.time.Duration;
import java.util.Optional;

/** Where decisions are stored, and what a request meets when the store cannot decide. */
public class StoreSettings {

  /** in-memory (one process) or redis (shared; needs the headroom-redis module). */
  private String type = "in-memory";

  /** Most partitions the in-memory store tracks before evicting the least recently used. */
  private long maxKeys = 1_000_000;

  /** What to do when the store cannot decide: allow (let requests through) or refuse. */
  private String onFailure = "allow";

  /** The Redis URI of store type redis, such as redis://127.0.0.1:6379. */
  private String redisUri = "redis://127.0.0.1:6379";

  /**
   * Store type redis: how long a refusal Redis gave answers equal requests without a round trip,
   * while its Retry-After runs (0 asks Redis every time; at most 1h).
   */
  private Duration refusalMemory = Duration.ofSeconds(1);

  /**
   * Store type redis: how long a request waits for Redis's answer before the store's failure
   * policy ({@code on-failure}) decides it (1ms to 1m; headroom-redis {@code RedisStore}'s default,
   * 100ms). It counts a replica acknowledgement's wait too, so it must exceed that timeout; keep it
   * above the timeout plus {@code 1000 / hz} ms of the Redis server (headroom-redis README).
   */
  private Duration decisionDeadline = Duration.ofMillis(100);

  /**
   * Store type redis, opt-in: keep an admission only once this many replicas of the Redis master
   * acknowledged its write (Redis WAIT), which closes the over-admission of a Sentinel failover.
   */
  private final ReplicaAcknowledgements replicaAcknowledgements = new ReplicaAcknowledgements();

  public String getType() {
    return type;
  }

  public void setType(String type) {
    this.type = type;
  }

  public long getMaxKeys() {
    return maxKeys;
  }

  public void setMaxKeys(long maxKeys) {
    this.maxKeys = maxKeys;
  }

  public String getOnFailure() {
    return onFailure;
  }

  public void setOnFailure(String onFailure) {
    this.onFailure = onFailure;
  }

  public String getRedisUri() {
    return redisUri;
  }

  public void setRedisUri(String redisUri) {
    this.redisUri = redisUri;
  }

  public Duration getRefusalMemory() {
    return refusalMemory;
  }

  public void setRefusalMemory(Duration refusalMemory) {
    this.refusalMemory = refusalMemory;
  }

  public Duration getDecisionDeadline() {
    return decisionDeadline;
  }

  public void setDecisionDeadline(Duration decisionDeadline) {
    this.decisionDeadline = decisionDeadline;
  }

  public ReplicaAcknowledgements getReplicaAcknowledgements() {
    return replicaAcknowledgements;
  }

  /**
   * Store type redis: the replicas that must acknowledge each admission's write, and how long Redis
   * waits for them; an admission acknowledged by fewer is a store failure ({@code on-failure}).
   * Off while {@code replicas} is unset.
   */
  public static class ReplicaAcknowledgements {

    /** How many replicas must acknowledge each admission (1 to 100); unset (the default), none. */
    private Integer replicas;

    /** How long Redis waits for them (WAIT's timeout), shorter than the decision deadline. */
    private Duration timeout = Duration.ofMillis(50);

    public Integer getReplicas() {
      return replicas;
    }

    public void setReplicas(Integer replicas) {
      this.replicas = replicas;
    }

    public Duration getTimeout() {
      return timeout;
    }

    public void setTimeout(Duration timeout) {
      this.timeout = timeout;
    }

    /**
     * What cannot be used, if anything: {@code replicas} outside 1 to {@code maxReplicas}, or a
     * {@code timeout} under 1 ms or not shorter than {@code deadline} (the decision deadline,
     * which counts the wait too). Nothing while {@code replicas} is unset.
     *
     * @param property the binding's name of these settings, such as
     *     {@code headroom.store.replica-acknowledgements}
     */
    public Optional<SettingsProblem> problem(String property, int maxReplicas, Duration deadline) {
      if (replicas == null) {
        return Optional.empty();
      }
      if (replicas < 1 || replicas > maxReplicas) {
        return Optional.of(SettingsProblem.of(property + ".replicas", replicas, "an integer from 1 to " + maxReplicas));
      }
      if (timeout == null || timeout.compareTo(Duration.ofMillis(1)) < 0 || timeout.compareTo(deadline) >= 0) {
        return Optional.of(SettingsProblem.of(property + ".timeout", timeout, "a duration from 1ms to less than the "
            + "decision deadline (" + deadline.toMillis() + "ms), which counts the wait for the replicas too"));
      }
      return Optional.empty();
    }
  }
}
