/**
 * JMH benchmarks of Headroom against its peers. Run from the shaded jar:
 * {@code java -jar headroom-benchmarks/target/benchmarks.jar <regexp> [JMH options]}; the figures
 * and the exact commands live in BENCHMARKS.md.
 */
package dev.headroom.benchmarks;
