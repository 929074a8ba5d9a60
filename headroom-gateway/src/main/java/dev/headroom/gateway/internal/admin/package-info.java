/**
 * The admin listener and what it shows: health and readiness, Prometheus metrics, the configuration in force
 * (passwords redacted), run-time capacity, reload, the graceful stop ({@code POST /drain}), and the live usage dashboard with its data,
 * event stream and static assets; and the meters behind them (decisions by policy and outcome,
 * store and upstream latency, the in-memory store's keys, the heavy hitters).
 *
 * <p>Owns: the admin port's requests and the gateway's meters. Nothing here decides a request.
 *
 * <p>May use: the configuration records, headroom-enforcement's capacity reductions, Micrometer and
 * Netty; of the gateway's runtime only {@link dev.headroom.gateway.internal.admin.LiveGateway} (what
 * it reads of the running gateway, which the proxy's state implements), the connections' timers and
 * lingering close. The proxy records into {@link dev.headroom.gateway.internal.admin.GatewayMetrics};
 * this package never reaches back into the proxy, so the two stay free of a circle.
 */
package dev.headroom.gateway.internal.admin;
