package dev.headroom.gateway.config;

import dev.headroom.redis.FailurePolicy;
import java.time.Duration;
import java.util.Optional;

/**
 * The store: its type, its bound on tracked keys (memory, and the in-memory fallback of redis
 * with failurePolicy FALLBACK), or for redis its URI, key prefix,
 * what to do when Redis cannot decide in time ({@code failurePolicy}), how long a decision
 * waits for it ({@code decisionDeadline}), how long a refusal Redis gave is remembered
 * ({@code refusalMemory}) and, when opted in, quota leasing ({@code leasing}) and the replicas
 * that must acknowledge each admission ({@code replicaAcknowledgements}).
 */
public record StoreSettings(StoreType type, long maxKeys, Optional<String> uri, Optional<String> keyPrefix,
    FailurePolicy failurePolicy, Duration decisionDeadline, Duration refusalMemory,
    Optional<LeasingSettings> leasing, Optional<ReplicaAcknowledgementSettings> replicaAcknowledgements) {}
