/**
 * The wire between the gateway and an upstream: HTTP/1.1 request heads written upstream, response
 * heads and bodies decoded from it, the hop-by-hop fields that never cross the proxy, and the
 * channel handler that carries them.
 *
 * <p>Owns: bytes and their framing (RFC 9112), nothing of limits or configuration.
 *
 * <p>May use: Netty and the JDK only; nothing else of the gateway. The proxy uses it through the
 * members this package publishes.
 */
package dev.headroom.gateway.internal.wire;
