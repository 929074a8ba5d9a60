package dev.headroom.gateway.internal.proxy;

import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;

/**
 * Why the gateway could not reach an {@code https://} upstream securely, in the few classes a caller
 * is told (the 502's {@code tlsFailure}) and the log line starts with: the upstream's certificate is
 * issued by no trusted authority, names another host, is outside its validity period, or the
 * handshake failed in another way (no common protocol or cipher, a client certificate refused, a
 * connection closed mid-handshake). The caller never learns more than the class; the log line adds
 * the JDK's own words.
 */
enum UpstreamTlsFailure {
  UNKNOWN_CA("unknown-ca", "its certificate is not issued by a trusted certificate authority"),
  WRONG_NAME("wrong-name", "its certificate is not issued for the upstream's host name"),
  EXPIRED("expired", "its certificate has expired or is not yet valid"),
  HANDSHAKE_FAILED("handshake-failed", "the TLS handshake with it failed");

  /** How deep a cause chain is searched: the JDK and Netty wrap a trust failure three or four times. */
  private static final int MAX_CAUSES = 16;

  /** The class as the response body names it. */
  final String token;
  /** The class in words, after "the upstream could not be reached securely: ". */
  final String words;

  UpstreamTlsFailure(String token, String words) {
    this.token = token;
    this.words = words;
  }

  /** The class of a handshake failure, from the exceptions the trust check threw (somewhere in its causes). */
  static UpstreamTlsFailure of(Throwable failure) {
    Throwable t = failure;
    for (int i = 0; t != null && i < MAX_CAUSES; i++, t = t.getCause()) {
      if (t instanceof UpstreamTrust.NameMismatch) {
        return WRONG_NAME;
      }
      if (t instanceof CertificateExpiredException || t instanceof CertificateNotYetValidException) {
        return EXPIRED;
      }
      if (t instanceof CertPathValidatorException v
          && (v.getReason() == CertPathValidatorException.BasicReason.EXPIRED
              || v.getReason() == CertPathValidatorException.BasicReason.NOT_YET_VALID)) {
        return EXPIRED;
      }
      if (t instanceof CertPathBuilderException) {
        return UNKNOWN_CA; // no path from the upstream's certificate to a trusted authority
      }
    }
    return HANDSHAKE_FAILED;
  }

  /**
   * How telling a class is when two trust checks disagree: the check that knew the authority saw
   * what is really wrong (a name, a date), the one that did not only saw a stranger.
   */
  int rank() {
    return switch (this) {
      case WRONG_NAME, EXPIRED -> 2;
      case HANDSHAKE_FAILED -> 1;
      case UNKNOWN_CA -> 0;
    };
  }
}
