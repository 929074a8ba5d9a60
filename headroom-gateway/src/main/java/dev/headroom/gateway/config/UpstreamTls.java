package dev.headroom.gateway.config;

import java.nio.file.Path;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * How the gateway speaks TLS to an {@code https://} upstream ({@code upstreams.NAME.tls}): the
 * certificate authorities it trusts besides the JDK's own ({@code tls.trustedCa}), and the client
 * certificate it presents when the upstream asks for one (mutual TLS: {@code tls.certificate} and
 * {@code tls.key}). The files are read once, at load, into the certificates and key kept here.
 * Server names are always verified (RFC 9110 section 4.3.4) and sent as SNI (RFC 6066 section 3).
 *
 * <p>Two settings are equal when they trust the same certificates and present the same certificate
 * and key, so that a reload that changes any of them opens new connections. The string form names
 * the files only, never the key.
 */
public final class UpstreamTls {
  private final Optional<Path> trustedCaFile;
  private final List<X509Certificate> trustedCa;
  private final Optional<Path> certificateFile;
  private final List<X509Certificate> certificateChain;
  private final Optional<Path> keyFile;
  private final Optional<PrivateKey> key;

  private UpstreamTls(Optional<Path> trustedCaFile, List<X509Certificate> trustedCa, Optional<Path> certificateFile,
      List<X509Certificate> certificateChain, Optional<Path> keyFile, Optional<PrivateKey> key) {
    this.trustedCaFile = trustedCaFile;
    this.trustedCa = List.copyOf(trustedCa);
    this.certificateFile = certificateFile;
    this.certificateChain = List.copyOf(certificateChain);
    this.keyFile = keyFile;
    this.key = key;
  }

  /** The JDK's trusted certificate authorities only, and no client certificate. */
  public static UpstreamTls jdkTrust() {
    return new UpstreamTls(Optional.empty(), List.of(), Optional.empty(), List.of(), Optional.empty(), Optional.empty());
  }

  /**
   * The JDK's certificate authorities and those of {@code file} as well.
   *
   * @param file where the certificates were read from, for messages
   * @param certificates at least one
   */
  public UpstreamTls withTrustedCa(Path file, List<X509Certificate> certificates) {
    if (certificates.isEmpty()) {
      throw new IllegalArgumentException("tls.trustedCa: expected at least one certificate");
    }
    return new UpstreamTls(Optional.of(file), certificates, certificateFile, certificateChain, keyFile, key);
  }

  /**
   * Presents {@code chain} (the client certificate first) with {@code key} to an upstream that asks.
   *
   * @param certificateFile where the chain was read from, for messages
   * @param keyFile where the key was read from, for messages
   */
  public UpstreamTls withClientCertificate(Path certificateFile, List<X509Certificate> chain, Path keyFile,
      PrivateKey key) {
    if (chain.isEmpty()) {
      throw new IllegalArgumentException("tls.certificate: expected at least one certificate");
    }
    return new UpstreamTls(trustedCaFile, trustedCa, Optional.of(certificateFile), chain, Optional.of(keyFile),
        Optional.of(key));
  }

  /** The file {@code tls.trustedCa} named, if any. */
  public Optional<Path> trustedCaFile() {
    return trustedCaFile;
  }

  /** The certificate authorities trusted besides the JDK's; empty without {@code tls.trustedCa}. */
  public List<X509Certificate> trustedCa() {
    return trustedCa;
  }

  /** The file {@code tls.certificate} named, if any. */
  public Optional<Path> certificateFile() {
    return certificateFile;
  }

  /** The client certificate chain, its own certificate first; empty without {@code tls.certificate}. */
  public List<X509Certificate> certificateChain() {
    return certificateChain;
  }

  /** The file {@code tls.key} named, if any. */
  public Optional<Path> keyFile() {
    return keyFile;
  }

  /** The client certificate's private key; present exactly when {@link #certificateChain()} is not empty. */
  public Optional<PrivateKey> key() {
    return key;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof UpstreamTls t && trustedCa.equals(t.trustedCa) && certificateChain.equals(t.certificateChain)
        && key.equals(t.key); // X509Certificate and the JDK's keys compare their encoded forms
  }

  @Override
  public int hashCode() {
    return Objects.hash(trustedCa, certificateChain);
  }

  @Override
  public String toString() {
    return "UpstreamTls[trustedCa=" + trustedCaFile.map(Path::toString).orElse("(JDK only)")
        + ", certificate=" + certificateFile.map(Path::toString).orElse("(none)")
        + ", key=" + keyFile.map(Path::toString).orElse("(none)") + "]";
  }
}
