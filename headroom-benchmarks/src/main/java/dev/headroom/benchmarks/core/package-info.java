/**
 * The in-memory store against its peers:
 * {@link dev.headroom.benchmarks.core.InMemoryLimiterBenchmark} on a hot key and on Zipf-distributed
 * keys ({@link dev.headroom.benchmarks.core.Workload}), a hand-written peer
 * ({@link dev.headroom.benchmarks.core.LeanGcra}), memory per key
 * ({@link dev.headroom.benchmarks.core.MemoryPerKey}) and the bounded store under a flood of keys
 * ({@link dev.headroom.benchmarks.core.StoreFloodBenchmark},
 * {@link dev.headroom.benchmarks.core.StoreFloodCpu}).
 *
 * <p>May use: anything in the tree, and the peers (benchmarks are never published).
 */
package dev.headroom.benchmarks.core;
