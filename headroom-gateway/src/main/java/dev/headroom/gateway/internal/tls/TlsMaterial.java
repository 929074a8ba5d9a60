package dev.headroom.gateway.internal.tls;

import dev.headroom.gateway.config.ListenTls;
import java.security.PrivateKey;
import java.security.interfaces.EdECKey;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import javax.security.auth.x500.X500Principal;

/**
 * What the files of {@code listen.tls} hold, read by {@link PemFiles} and checked together: the
 * certificate chain, the private key, which must be the key of the chain's first certificate
 * ({@link PemFiles#privateKeyOf}) and an RSA or EC key, and the client CA's certificates. Immutable.
 *
 * @param chain the server's certificate first
 * @param key the private key of {@code chain.get(0)}
 * @param clientCa the certificates client certificates are verified against; empty without clientAuth
 */
public record TlsMaterial(List<X509Certificate> chain, PrivateKey key, List<X509Certificate> clientCa) {

  /**
   * The key algorithms the listener serves with. The reader takes more (Ed25519, Ed448,
   * RSASSA-PSS in PKCS#8, for an upstream's client certificate), but Netty's OpenSSL engine
   * accepts such a key and then fails every handshake with an internal error alert: refused at
   * load instead.
   */
  private static final Set<String> SERVED = Set.of("RSA", "EC");

  /** Copies the lists. */
  public TlsMaterial {
    chain = List.copyOf(chain);
    clientCa = List.copyOf(clientCa);
  }

  /**
   * Reads the files {@code tls} names.
   *
   * @throws TlsFileException naming the setting and the file that cannot serve
   */
  public static TlsMaterial read(ListenTls tls) {
    List<X509Certificate> chain = PemFiles.certificates("listen.tls.certificate", tls.certificate());
    PrivateKey key = PemFiles.privateKeyOf("listen.tls.key", tls.key(), tls.certificate(), chain.get(0));
    if (!SERVED.contains(key.getAlgorithm())) {
      // EdDSA keys say which curve they are on (Ed25519, Ed448): the name the user's tool wrote
      String kind = key instanceof EdECKey ed ? ed.getParams().getName() : key.getAlgorithm();
      throw new TlsFileException("listen.tls.key", tls.key(), "holds an " + kind + " key; expected an RSA or EC key"
          + " (the listener's TLS engine does not serve with an " + kind + " key)");
    }
    List<X509Certificate> ca = tls.clientCa().map(f -> PemFiles.certificates("listen.tls.clientCa", f))
        .orElse(List.of());
    return new TlsMaterial(chain, key, ca);
  }

  /**
   * A one-line warning when the server's certificate is not valid at {@code now}: expired, or not
   * yet valid. Clients will refuse it, but the gateway still starts (a certificate renewed in
   * place is picked up without a restart).
   */
  public Optional<String> validityWarning(String file, Instant now) {
    X509Certificate c = chain.get(0);
    if (now.isAfter(c.getNotAfter().toInstant())) {
      return Optional.of("listen.tls.certificate: \"" + file + "\" (" + subject(c) + ") expired at "
          + c.getNotAfter().toInstant() + "; clients will refuse it until it is renewed");
    }
    if (now.isBefore(c.getNotBefore().toInstant())) {
      return Optional.of("listen.tls.certificate: \"" + file + "\" (" + subject(c) + ") is not valid before "
          + c.getNotBefore().toInstant() + "; clients will refuse it until then");
    }
    return Optional.empty();
  }

  /** The certificate's subject, RFC 2253 form. */
  static String subject(X509Certificate c) {
    return c.getSubjectX500Principal().getName(X500Principal.RFC2253);
  }
}
