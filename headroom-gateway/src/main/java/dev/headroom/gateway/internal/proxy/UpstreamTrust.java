package dev.headroom.gateway.internal.proxy;

import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * The upstream's certificate is trusted when the JDK's trust store trusts it, or when the
 * configured {@code tls.trustedCa} does: one trust manager over both, each the JDK's own PKIX
 * trust manager (RFC 5280 path validation), so that adding a private CA never stops the public
 * ones from working. The host name check (RFC 9110 section 4.3.4, RFC 6125) is the JDK's too: the
 * engine asks for it ({@code HTTPS} endpoint identification, set by {@link UpstreamTlsContext}) and
 * each delegate performs it when it is given the engine.
 *
 * <p>When every delegate refuses, the refusal thrown is the most telling one
 * ({@link UpstreamTlsFailure#rank}): an expired certificate from the private CA is reported as
 * expired, not as unknown to the JDK's store. A refusal that is only the host name (the same
 * delegate accepts the chain without the name check) is thrown as a {@link NameMismatch}, so that
 * the 502 can say so without reading the JDK's message.
 *
 * <p>Thread-safe: immutable, over thread-safe delegates. Server certificates only: the gateway is
 * the client.
 */
final class UpstreamTrust extends X509ExtendedTrustManager {
  private final List<X509ExtendedTrustManager> delegates;

  private UpstreamTrust(List<X509ExtendedTrustManager> delegates) {
    this.delegates = List.copyOf(delegates);
  }

  /** The JDK's default trust store, and {@code extraCa} when not empty. */
  static UpstreamTrust of(List<X509Certificate> extraCa) throws GeneralSecurityException {
    List<X509ExtendedTrustManager> delegates = new ArrayList<>();
    delegates.add(pkix(null));
    if (!extraCa.isEmpty()) {
      KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
      try {
        store.load(null, null);
      } catch (java.io.IOException e) {
        throw new GeneralSecurityException("an empty key store could not be made", e);
      }
      int i = 0;
      for (X509Certificate ca : extraCa) {
        store.setCertificateEntry("trusted-ca-" + i++, ca);
      }
      delegates.add(pkix(store));
    }
    return new UpstreamTrust(delegates);
  }

  private static X509ExtendedTrustManager pkix(KeyStore store) throws GeneralSecurityException {
    TrustManagerFactory f = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    f.init(store); // null: the JDK's default trust store (cacerts, or javax.net.ssl.trustStore)
    for (TrustManager tm : f.getTrustManagers()) {
      if (tm instanceof X509ExtendedTrustManager x) {
        return x;
      }
    }
    throw new GeneralSecurityException("the JDK's " + f.getAlgorithm() + " trust manager factory made no X.509 trust manager");
  }

  /** A refusal that is the host name alone: the certificate chain is trusted, but not for this host. */
  static final class NameMismatch extends CertificateException {
    private static final long serialVersionUID = 1L;

    NameMismatch(CertificateException jdk) {
      super(jdk.getMessage(), jdk);
    }
  }

  private interface Check {
    void run(X509ExtendedTrustManager tm) throws CertificateException;
  }

  /** Runs {@code check} against each delegate until one accepts; else throws the most telling refusal. */
  private void anyOf(X509Certificate[] chain, String authType, Check check) throws CertificateException {
    CertificateException best = null;
    for (X509ExtendedTrustManager tm : delegates) {
      CertificateException refusal;
      try {
        check.run(tm);
        return;
      } catch (CertificateException e) {
        refusal = nameOnly(tm, chain, authType, e);
      }
      if (best == null || UpstreamTlsFailure.of(refusal).rank() > UpstreamTlsFailure.of(best).rank()) {
        best = refusal;
      }
    }
    throw best;
  }

  /**
   * {@code e} as a {@link NameMismatch} when it is the JDK's name check: a plain
   * CertificateException (path failures are subclasses) from a delegate that trusts the chain.
   */
  private static CertificateException nameOnly(X509ExtendedTrustManager tm, X509Certificate[] chain, String authType,
      CertificateException e) {
    if (e.getClass() != CertificateException.class) {
      return e;
    }
    try {
      tm.checkServerTrusted(chain, authType); // the chain alone, without the host name
    } catch (CertificateException chainRefused) {
      return e;
    }
    return new NameMismatch(e);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
      throws CertificateException {
    anyOf(chain, authType, tm -> tm.checkServerTrusted(chain, authType, engine));
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
      throws CertificateException {
    anyOf(chain, authType, tm -> tm.checkServerTrusted(chain, authType, socket));
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
    anyOf(chain, authType, tm -> tm.checkServerTrusted(chain, authType));
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
      throws CertificateException {
    throw new CertificateException("the gateway trusts upstream servers, never clients, with this trust manager");
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
      throws CertificateException {
    throw new CertificateException("the gateway trusts upstream servers, never clients, with this trust manager");
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
    throw new CertificateException("the gateway trusts upstream servers, never clients, with this trust manager");
  }

  @Override
  public X509Certificate[] getAcceptedIssuers() {
    return delegates.stream().flatMap(d -> Stream.of(d.getAcceptedIssuers())).toArray(X509Certificate[]::new);
  }

  @Override
  public String toString() {
    return "UpstreamTrust[" + delegates.size() + " trust stores: the JDK's"
        + (delegates.size() > 1 ? " and tls.trustedCa" : "") + "]";
  }
}
