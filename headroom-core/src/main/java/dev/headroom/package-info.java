/**
 * Headroom's core: quota policies, partitions, the decision of a whole request and the store it is
 * made in, with no HTTP and nothing outside the JDK.
 *
 * <p>{@link dev.headroom.QuotaLimiter} is the entry point: it decides every
 * {@link dev.headroom.QuotaPolicy} of a request at once, all or nothing, against a
 * {@link dev.headroom.Store} (the service provider interface; {@link dev.headroom.InMemoryStore}
 * is the bounded store of one process, headroom-redis the distributed one), and answers a
 * {@link dev.headroom.Decision}. A policy counts one {@link dev.headroom.QuotaUnit} with one
 * {@link dev.headroom.Algorithm} per {@link dev.headroom.PartitionKey}, split by a typed
 * {@link dev.headroom.Partitioning}. Time comes only from an injected {@link dev.headroom.Ticker}
 * ({@link dev.headroom.ManualTicker} in tests and simulations).
 *
 * <p>May use: the JDK only. The algorithms live in {@code dev.headroom.internal}, which no other
 * module may use; what another module needs of them is published here (for example
 * {@code QuotaPolicy.emissionIntervalNanos()} for the Redis store's token bucket).
 */
package dev.headroom;
