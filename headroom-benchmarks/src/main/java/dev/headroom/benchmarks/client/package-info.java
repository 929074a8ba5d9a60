/**
 * Client pacing benchmarks: {@link dev.headroom.benchmarks.client.ClientPacingBenchmark} (each server
 * algorithm in each dialect) and {@link dev.headroom.benchmarks.client.ClientPacingOpenLoopBenchmark}
 * (an application asking for ten times the allowed rate): refusals and time to finish.
 *
 * <p>May use: anything in the tree, and the peers (benchmarks are never published).
 */
package dev.headroom.benchmarks.client;
