package dev.headroom.servlet;

import dev.headroom.conformance.HttpAdapterSpec;

/**
 * The HTTP conformance specification for the filter in a servlet container: each container's test
 * starts it with {@link #filter}, built by {@link SpecApplication#filter}, and run-time capacity
 * goes through the filter's own {@link HeadroomFilter#reduceCapacity}.
 */
abstract class ServletSpec extends HttpAdapterSpec {

  /** The filter under test, set by {@link #start}. */
  protected HeadroomFilter filter;

  @Override
  protected void reduceCapacity(String policy, double factor) {
    filter.reduceCapacity(policy, factor);
  }
}
