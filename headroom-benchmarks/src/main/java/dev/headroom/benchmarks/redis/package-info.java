/**
 * The Redis store against its peers ({@link dev.headroom.benchmarks.redis.RedisStoreBenchmark}, against
 * Bucket4j's Lettuce setup) and the commands quota leasing saves
 * ({@link dev.headroom.benchmarks.redis.LeasingCommandCount}), against a real Redis.
 *
 * <p>May use: anything in the tree, and the peers (benchmarks are never published).
 */
package dev.headroom.benchmarks.redis;
