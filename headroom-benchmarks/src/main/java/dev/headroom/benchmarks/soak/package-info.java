/**
 * What the gateway's long runs leave behind: {@link dev.headroom.benchmarks.soak.SoakPlot} draws
 * the samples {@code load/gateway-soak.sh} and {@code load/gateway-overload.sh} take every ten
 * seconds, and says whether each stayed flat.
 */
package dev.headroom.benchmarks.soak;
