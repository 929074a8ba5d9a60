package dev.headroom.enforcement.settings;

import java.time.Duration;

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
}
