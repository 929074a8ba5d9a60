/**
 * The capacity ramp ({@code load/capacity-ramp.sh}): a {@link dev.headroom.benchmarks.ramp.SimulatedUpstream}
 * of known capacity whose latency grows with concurrency, an open-loop
 * {@link dev.headroom.benchmarks.ramp.LoadRamp} from half to three times its capacity and back,
 * and {@link dev.headroom.benchmarks.ramp.RampPlot}, which draws the goodput and latency of each
 * limiter in front of it.
 */
package dev.headroom.benchmarks.ramp;
