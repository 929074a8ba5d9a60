/**
 * What ties the gateway's parts together: {@code GatewayServer} (binds the listeners, builds a
 * {@code Snapshot} of the proxy from a configuration, swaps it on reload, closes everything),
 * the graceful stop ({@code Drain}: the open client connections, retired and waited for), the
 * event loops, the connections' timers, lingering close, the demo upstream, and the plan
 * resolvers kept alive across reloads ({@code PlanResolvers}, {@code HeldResolver}).
 *
 * <p>Sub-packages, one job each: {@code config} reads the configuration, {@code proxy} handles
 * requests, {@code admin} serves the admin listener and keeps the meters, {@code wire} reads and
 * writes HTTP/1.1 bytes to upstreams, {@code accesslog} writes the access log's lines off the event
 * loops.
 *
 * <p>May use: every sub-package. The sub-packages use of this package only the small shared
 * pieces (timers, lingering close, plan resolvers), never {@code GatewayServer}.
 */
package dev.headroom.gateway.internal;
