package dev.headroom.gateway.internal.proxy;

import java.util.Objects;
import java.util.Optional;

/**
 * What a client connection's transport tells the exchanges it carries, decided once when the
 * connection's protocol is: whether it is TLS (the {@code proto} of the Forwarded element and
 * {@code X-Forwarded-Proto} sent upstream), and the subject of the certificate the client
 * presented, if any, verified against {@code listen.tls.clientCa} (what {@code client-cert}
 * partitions by). Immutable.
 *
 * @param secure whether the connection is TLS
 * @param certificateSubject the client certificate's subject, RFC 2253 form ({@code CN=alice,O=Example})
 */
public record ClientTransport(boolean secure, Optional<String> certificateSubject) {
  /** A cleartext connection. */
  public static final ClientTransport PLAIN = new ClientTransport(false, Optional.empty());

  /** Checks that nothing is null. */
  public ClientTransport {
    Objects.requireNonNull(certificateSubject, "certificateSubject");
  }
}
