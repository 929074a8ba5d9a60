/**
 * HTTP/2 towards clients: the connection (Netty's {@code Http2FrameCodec} and
 * {@code Http2MultiplexHandler}, bounded by {@link dev.headroom.gateway.internal.h2.ConnectionGuard}),
 * how a cleartext connection comes to speak it (the preface, {@code Upgrade: h2c}), and each stream
 * adapted to the one exchange path of {@code internal.proxy} ({@link dev.headroom.gateway.internal.h2.StreamAdapter}),
 * an extended CONNECT (RFC 8441) to a WebSocket handshake and then a tunnel's bytes
 * ({@link dev.headroom.gateway.internal.h2.ExtendedConnect}).
 * The entry point is {@link dev.headroom.gateway.internal.h2.Http2Front}.
 *
 * <p>Owns: the HTTP/2 wire towards clients and its bounds. Upstreams stay HTTP/1.1.
 *
 * <p>May use: {@code internal.proxy} (the handler every stream runs), the meters of
 * {@code internal.admin}, and of {@code internal} the timers. It never refers to the server that
 * installs it.
 */
package dev.headroom.gateway.internal.h2;
