/**
 * The algorithms and the in-memory store's engine behind {@link dev.headroom.QuotaLimiter}:
 * {@link dev.headroom.internal.Gcra} (token bucket), {@link dev.headroom.internal.FixedWindow},
 * {@link dev.headroom.internal.SlidingWindow}, {@link dev.headroom.internal.Concurrency} and
 * {@link dev.headroom.internal.LocalStore}. Each algorithm's class comment explains the state it
 * keeps, its formulas with worked numbers, and what {@code r}, {@code t} and Retry-After say for it.
 *
 * <p>May use: {@code dev.headroom} and the JDK. Private to headroom-core: no other module uses it
 * ({@code ModuleBoundaryTest}).
 */
package dev.headroom.internal;
