package dev.headroom.gateway.config;

import java.time.Duration;

/**
 * {@code store.replicaAcknowledgements}: an admission is kept only once {@code replicas} replicas
 * of the Redis master have acknowledged its write within {@code timeout}
 * ({@code dev.headroom.redis.RedisStore.Builder#replicaAcknowledgements}).
 */
public record ReplicaAcknowledgementSettings(int replicas, Duration timeout) {}
