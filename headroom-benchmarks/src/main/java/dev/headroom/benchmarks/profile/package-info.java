/**
 * A JMH profiler that reports CPU nanoseconds per operation
 * ({@link dev.headroom.benchmarks.profile.CpuTimeProfiler}), for machines shared with other work.
 *
 * <p>May use: JMH and the JDK.
 */
package dev.headroom.benchmarks.profile;
