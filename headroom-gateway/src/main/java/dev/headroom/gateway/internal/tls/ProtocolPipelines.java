package dev.headroom.gateway.internal.tls;

import dev.headroom.gateway.internal.proxy.ClientTransport;
import io.netty.channel.Channel;
import java.util.List;

/**
 * Installs the handlers of an application protocol on a client connection once its protocol is
 * known: at once on a cleartext listener, after the TLS handshake and ALPN (RFC 7301) on a TLS
 * one ({@link AlpnSwitch}). Implementations add to the end of {@code ch}'s pipeline and do not
 * fire {@code channelActive} themselves: the caller does, when the channel was active already.
 */
public interface ProtocolPipelines {

  /** The ALPN protocol ids offered, most preferred first ({@code h2} only when HTTP/2 is installed). */
  List<String> offered();

  /** HTTP/1.1 (RFC 9112): the gateway's request decoder, response encoder and proxy handler. */
  void http1(Channel ch, ClientTransport transport);

  /** HTTP/2 (RFC 9113), chosen by ALPN {@code h2}; called only when {@link #offered()} lists it. */
  void h2(Channel ch, ClientTransport transport);
}
