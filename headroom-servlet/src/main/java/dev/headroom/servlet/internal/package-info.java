/**
 * The request and response wrappers of {@link dev.headroom.servlet.HeadroomFilter}: the limited
 * request and response that write RateLimit fields at the commit point and count bytes
 * ({@link dev.headroom.servlet.internal.LimitedRequest},
 * {@link dev.headroom.servlet.internal.LimitedResponse}), completion exactly once
 * ({@link dev.headroom.servlet.internal.Completion}), vend calls replayed and buffered
 * ({@link dev.headroom.servlet.internal.ReplayedRequest},
 * {@link dev.headroom.servlet.internal.BufferedResponse}), error bodies
 * ({@link dev.headroom.servlet.internal.ErrorBodyResponse}) and the request as the gate reads it
 * ({@link dev.headroom.servlet.internal.ServletRequestView}).
 *
 * <p>May use: {@code dev.headroom.servlet}, headroom-enforcement, headroom-vend, headroom-http,
 * headroom-core and the Jakarta Servlet API. Private to headroom-servlet.
 */
package dev.headroom.servlet.internal;
