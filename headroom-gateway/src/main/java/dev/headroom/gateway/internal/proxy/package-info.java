/**
 * The proxy itself: one client connection ({@code ProxyHandler}), one request on it from head to
 * end ({@code ProxyExchange}: admission, the decision through headroom-enforcement's {@code Gate}, the
 * upstream leg, the response relays, accounting), vend routes, the gateway's own answers and their
 * words ({@code GatewayMessages}, {@code LocalResponse}, the limits page), and the state every
 * connection shares ({@code GatewayState}, whose current {@code Snapshot} a reload swaps).
 *
 * <p>Owns: what becomes of each request the gateway receives.
 *
 * <p>May use: the configuration records, headroom-enforcement, headroom-http and headroom-vend;
 * the wire ({@code internal.wire}); the sections and vend limits of {@code internal.config}; the
 * meters and {@code LiveGateway} of {@code internal.admin}; the access log's writer
 * ({@code internal.accesslog}); and of {@code internal} the timers,
 * lingering close and the plan resolvers' holds. It never refers to the server that builds it
 * ({@code GatewayServer}), which keeps the packages free of a circle: the server depends on the
 * proxy, never the reverse.
 */
package dev.headroom.gateway.internal.proxy;
