/**
 * A Spring Boot application limited by the Headroom starter
 * ({@link dev.headroom.examples.demo.DemoApplication}), which {@code headroom check --probe} rates
 * at the conformance level it declares.
 *
 * <p>May use: the starter and Spring Boot, as any application would.
 */
package dev.headroom.examples.demo;
