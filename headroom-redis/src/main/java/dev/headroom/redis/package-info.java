/**
 * The distributed {@link dev.headroom.Store}: {@link dev.headroom.redis.RedisStore} keeps quota
 * state in Redis or Redis Cluster and decides every policy of a request in one Lua round trip, on
 * Redis time; its {@link dev.headroom.redis.FailurePolicy} says what happens when Redis cannot
 * decide ({@link dev.headroom.redis.RedisUnavailableException}), and
 * {@link dev.headroom.redis.StoreOverloadedException} when this process cannot ask it in time.
 * {@link dev.headroom.redis.LeasingStore} with its {@link dev.headroom.redis.Leasing} options takes
 * slices of a partition's quota to spend locally (scale path step 4 of ARCHITECTURE.md). The
 * class comments say how each works; the module's README gives the measurements behind them.
 *
 * <p>May use: headroom-core, Lettuce (and the Netty it runs on) and SLF4J.
 * {@code dev.headroom.redis.internal} is this module's own.
 */
package dev.headroom.redis;
