/**
 * A runnable walk through the core limiter on a simulated clock ({@link dev.headroom.demo.Demo}).
 *
 * <p>May use: {@code dev.headroom} only, as an application would.
 */
package dev.headroom.demo;
