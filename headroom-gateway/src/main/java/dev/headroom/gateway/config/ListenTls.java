package dev.headroom.gateway.config;

import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The listener's TLS ({@code listen.tls}): the server's certificate chain and private key (PEM
 * files; the key PKCS#8 or traditional PKCS#1 / SEC1, RSA or EC), the protocol versions offered,
 * and whether clients present certificates, verified against {@code clientCa}. The files are
 * read again when they change: new handshakes use the new pair, open connections keep theirs.
 *
 * @param certificate the PEM certificate chain, the server's certificate first
 * @param key the PEM private key matching the certificate
 * @param protocols the TLS versions offered, such as {@code TLSv1.3} and {@code TLSv1.2}
 * @param clientAuth whether a client certificate is asked for
 * @param clientCa the PEM certificates client certificates are verified against; present exactly
 *     when {@code clientAuth} is not {@link ClientAuth#NONE}
 */
public record ListenTls(Path certificate, Path key, List<String> protocols, ClientAuth clientAuth,
    Optional<Path> clientCa) {

  /** The protocol versions offered when {@code protocols} is not given. */
  public static final List<String> DEFAULT_PROTOCOLS = List.of("TLSv1.3", "TLSv1.2");

  /** The protocol versions {@code protocols} may name. */
  public static final List<String> KNOWN_PROTOCOLS = List.of("TLSv1.3", "TLSv1.2");

  /** Checks that nothing is null and copies the list. */
  public ListenTls {
    Objects.requireNonNull(certificate, "certificate");
    Objects.requireNonNull(key, "key");
    protocols = List.copyOf(protocols);
    Objects.requireNonNull(clientAuth, "clientAuth");
    Objects.requireNonNull(clientCa, "clientCa");
  }

  /** Whether clients are asked for a certificate ({@code clientAuth: none|optional|required}). */
  public enum ClientAuth {
    /** No certificate is asked for. */
    NONE("none"),
    /** A certificate is asked for; a client without one is served all the same. */
    OPTIONAL("optional"),
    /** A client without a certificate the CA vouches for fails the handshake. */
    REQUIRED("required");

    private final String token;

    ClientAuth(String token) {
      this.token = token;
    }

    /** The configuration token. */
    public String token() {
      return token;
    }
  }
}
