package dev.headroom.benchmarks.profile;

import com.sun.management.OperatingSystemMXBean;
import java.lang.management.ManagementFactory;
import java.util.Collection;
import java.util.List;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;

/**
 * CPU nanoseconds per operation: the process CPU time an iteration consumed (every thread of the
 * benchmark JVM, so the benchmark threads, and the garbage collector for designs that allocate)
 * divided by the operations it measured. Unlike throughput, it does not count the time a thread
 * spends waiting for a core, so on a machine shared with other work it moves far less from run to
 * run; it still feels caches and memory bandwidth shared with that work.
 *
 * <pre>java -jar benchmarks.jar ... -prof dev.headroom.benchmarks.profile.CpuTimeProfiler</pre>
 */
public final class CpuTimeProfiler implements InternalProfiler {

  private final OperatingSystemMXBean os =
      (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
  private long startCpu;

  @Override
  public String getDescription() {
    return "process CPU nanoseconds per operation";
  }

  @Override
  public void beforeIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams) {
    startCpu = os.getProcessCpuTime();
  }

  @Override
  public Collection<? extends Result> afterIteration(BenchmarkParams benchmarkParams,
      IterationParams iterationParams, IterationResult result) {
    long cpu = os.getProcessCpuTime() - startCpu;
    long ops = result.getMetadata().getMeasuredOps();
    double perOp = ops == 0 ? Double.NaN : (double) cpu / ops;
    return List.of(new ScalarResult("cpu.ns/op", perOp, "ns/op", AggregationPolicy.AVG));
  }
}
