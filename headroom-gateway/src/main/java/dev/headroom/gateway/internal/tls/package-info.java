/**
 * TLS on the gateway's proxy listener: reading the PEM certificate and key ({@code PemFiles}, the
 * one PEM reader of the gateway, which reads the upstreams' TLS files too, and {@code TlsMaterial}), the server context rebuilt when those files change ({@code ListenerTls}),
 * refusing plain HTTP sent to the TLS port ({@code PlaintextGuard}), and choosing the application
 * protocol by ALPN after the handshake ({@code AlpnSwitch}, {@code ProtocolPipelines}).
 */
package dev.headroom.gateway.internal.tls;
