/**
 * What a service publishes about its limits: the Graceful Boundaries discovery document
 * ({@link dev.headroom.enforcement.discovery.LimitsDiscoveryDocument}, served at
 * {@code /api/limits} and {@code /.well-known/limits}) built from
 * {@link dev.headroom.enforcement.discovery.DiscoveryRoute}s and their policies, its
 * {@link dev.headroom.enforcement.discovery.ConformanceLevel}, and the strong
 * {@link dev.headroom.enforcement.discovery.EntityTag} that lets a client revalidate it.
 *
 * <p>May use: {@code dev.headroom.enforcement.plan} (a plan's limits are listed), headroom-http's
 * {@code .body} and {@code .path}, headroom-core and Jackson.
 */
package dev.headroom.enforcement.discovery;
