package dev.headroom.benchmarks;

import dev.headroom.Ticker;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * The floor under every in-memory decision: one read of the system {@link Ticker}. A decision can
 * never be cheaper than this, so the figure calibrates the others.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class TickerBenchmark {

  private final Ticker ticker = Ticker.system();

  @Benchmark
  public long systemTicker() {
    return ticker.read();
  }
}
