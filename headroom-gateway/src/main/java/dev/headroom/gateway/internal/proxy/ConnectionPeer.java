package dev.headroom.gateway.internal.proxy;

import dev.headroom.enforcement.partition.PeerKeys;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Objects;
import java.util.Optional;

/**
 * What the gateway derives from a client connection's peer, once per connection: the peer's address
 * as text (the node of Forwarded's "for" and X-Forwarded-For's entry, the access log's client), as an
 * IP literal for the gate, the partition keys derived from it ({@link PeerKeys}), and this hop's
 * Forwarded element with the Host it was made with (requests on one connection nearly always carry
 * the same Host). An HTTP/1.1 connection's {@link ProxyHandler} makes its own; an HTTP/2
 * connection's streams, each with a handler of its own, share the connection's, so a stream costs
 * none of these derivations.
 *
 * <p>State: the address text and literal, set when first asked; the Forwarded element last made and
 * its Host. Thread-safety: confined to the connection's event loop (its streams run on it), except
 * {@link PeerKeys}, which is thread-safe.
 */
public final class ConnectionPeer {
  private final SocketAddress remote;
  private final PeerKeys peerKeys = PeerKeys.forConnection();
  private String text;
  private Optional<String> literal;
  private String forwardedHost;
  private String forwardedElement;

  /** The peer of a connection whose remote address is {@code remote} (null when it has none). */
  public ConnectionPeer(SocketAddress remote) {
    this.remote = remote;
  }

  InetAddress address() {
    return remote instanceof InetSocketAddress isa ? isa.getAddress() : null;
  }

  /** The peer's address as text, or {@code unknown}. */
  String text() {
    String t = text;
    if (t == null) {
      InetAddress peer = address();
      t = peer == null ? "unknown" : peer.getHostAddress();
      text = t;
      literal = peer == null ? Optional.empty() : Optional.of(t);
    }
    return t;
  }

  /** The peer's address as an IP literal, for the gate ({@code RequestView.remoteAddress}); empty when it has none. */
  Optional<String> literal() {
    if (literal == null) {
      text();
    }
    return literal;
  }

  /** The partition keys derived from this peer alone. */
  PeerKeys peerKeys() {
    return peerKeys;
  }

  /**
   * This hop's Forwarded element (RFC 7239 section 4): for, proto ({@code https} when the client
   * connection is TLS, which is the same for every request of a connection) and host.
   */
  String forwardedElement(String forFor, String host, boolean secure) {
    if (forwardedElement != null && Objects.equals(host, forwardedHost)) {
      return forwardedElement;
    }
    String fwd = "for=" + (forFor.indexOf(':') >= 0 ? "\"[" + forFor + "]\"" : forFor)
        + (secure ? ";proto=https" : ";proto=http")
        + (host == null ? "" : ";host=\"" + host.replace("\"", "") + "\"");
    forwardedHost = host;
    forwardedElement = fwd;
    return fwd;
  }
}
