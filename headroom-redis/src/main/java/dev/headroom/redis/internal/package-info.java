/**
 * The parts of {@link dev.headroom.redis.RedisStore}: the Lua decision code and its calling
 * convention ({@link dev.headroom.redis.internal.DecisionScript},
 * {@link dev.headroom.redis.internal.DecisionCalls}, {@link dev.headroom.redis.internal.FcallArgs},
 * {@link dev.headroom.redis.internal.KeyLayout}), coalescing of concurrent decisions
 * ({@link dev.headroom.redis.internal.Coalescer}), remembered refusals
 * ({@link dev.headroom.redis.internal.RefusalMemory}), the decision deadline counted from the
 * command's write ({@link dev.headroom.redis.internal.Deadlines},
 * {@link dev.headroom.redis.internal.WriteStamp}), Cluster slot shares
 * ({@link dev.headroom.redis.internal.SlotShare}) and the leasing slice rule
 * ({@link dev.headroom.redis.internal.SliceSize}, shared with the cluster simulation of
 * headroom-benchmarks).
 *
 * <p>May use: {@code dev.headroom.redis}'s exceptions, headroom-core, Lettuce, Netty and SLF4J.
 * Private to headroom-redis (the benchmarks aside, which may use anything).
 */
package dev.headroom.redis.internal;
