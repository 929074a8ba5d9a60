package dev.headroom.gateway.config;

/** Which store keeps the counters. */
public enum StoreType {
  /** One process, in memory. */
  MEMORY,
  /** Many processes sharing one Redis (the headroom-redis module). */
  REDIS
}
