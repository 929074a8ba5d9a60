package dev.headroom.gateway;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A test certificate authority made with the {@code openssl} command in a temporary folder: the
 * CA, server certificates for {@code localhost} and {@code 127.0.0.1} with RSA or EC keys in
 * PKCS#8 or traditional PEM, client certificates, and the JDK {@link SSLContext}s that trust the
 * CA (and present a client certificate). Nothing is checked in: each run makes its own. Public for
 * headroom-cli's tests (through this module's test jar).
 */
public final class TestCertificates {
  /** How a private key is written. */
  public enum KeyKind {
    /** {@code PRIVATE KEY} (PKCS#8), RSA. */
    RSA_PKCS8,
    /** {@code RSA PRIVATE KEY} (PKCS#1). */
    RSA_TRADITIONAL,
    /** {@code PRIVATE KEY} (PKCS#8), EC P-256. */
    EC_PKCS8,
    /** {@code EC PRIVATE KEY} (SEC1), P-256. */
    EC_TRADITIONAL
  }

  /** A certificate file and its key file. */
  public record Pair(Path certificate, Path key) {}

  private final Path dir;
  private final Path caCert;
  private final Path caKey;
  private int serial;

  private TestCertificates(Path dir) {
    this.dir = dir;
    this.caCert = dir.resolve("ca.pem");
    this.caKey = dir.resolve("ca.key");
  }

  /** A new CA in {@code dir}. */
  public static TestCertificates create(Path dir) throws IOException, InterruptedException {
    TestCertificates c = new TestCertificates(dir);
    openssl(dir, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
        "-days", "3", "-subj", "/CN=Headroom Test CA", "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign");
    return c;
  }

  /** The CA's certificate file. */
  public Path ca() {
    return caCert;
  }

  /** A server certificate for localhost and 127.0.0.1, valid three days, its key written as {@code kind}. */
  public Pair server(String name, KeyKind kind) throws IOException, InterruptedException {
    return issue(name, "/CN=localhost", kind, "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
        + "extendedKeyUsage=serverAuth\n");
  }

  /** A client certificate with subject {@code subject} (such as {@code /O=Example/CN=alice}, which RFC 2253 writes {@code CN=alice,O=Example}). */
  public Pair client(String name, String subject) throws IOException, InterruptedException {
    return issue(name, subject, KeyKind.EC_PKCS8, "extendedKeyUsage=clientAuth\n");
  }

  private Pair issue(String name, String subject, KeyKind kind, String extensions)
      throws IOException, InterruptedException {
    String key = name + ".key";
    switch (kind) {
      case RSA_PKCS8 -> openssl(dir, "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", key);
      case RSA_TRADITIONAL -> {
        openssl(dir, "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", name + ".p8");
        openssl(dir, "rsa", "-in", name + ".p8", "-traditional", "-out", key);
      }
      case EC_PKCS8 -> openssl(dir, "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key);
      case EC_TRADITIONAL -> openssl(dir, "ecparam", "-name", "prime256v1", "-genkey", "-out", key);
    }
    Files.writeString(dir.resolve(name + ".ext"), extensions, StandardCharsets.US_ASCII);
    openssl(dir, "req", "-new", "-key", key, "-subj", subject, "-out", name + ".csr");
    openssl(dir, "x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial",
        Integer.toString(++serial + 1000), "-days", "3", "-extfile", name + ".ext", "-out", name + ".pem");
    return new Pair(dir.resolve(name + ".pem"), dir.resolve(key));
  }

  /** The first PEM line of a file: what encoding a key has. */
  public static String firstLine(Path file) throws IOException {
    return Files.readAllLines(file).stream().filter(l -> l.startsWith("-----BEGIN")).findFirst().orElse("");
  }

  /** A client context that trusts this CA only. */
  public SSLContext trusting() throws Exception {
    return context(null);
  }

  /** A client context that trusts this CA and presents {@code client}'s certificate. */
  public SSLContext presenting(Pair client) throws Exception {
    return context(client);
  }

  private SSLContext context(Pair client) throws Exception {
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry("ca", certificates(caCert).get(0));
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    KeyManagerFactory kmf = null;
    if (client != null) {
      Path p12 = dir.resolve(client.certificate().getFileName() + ".p12");
      openssl(dir, "pkcs12", "-export", "-in", client.certificate().toString(), "-inkey", client.key().toString(),
          "-passout", "pass:changeit", "-out", p12.toString());
      KeyStore ks = KeyStore.getInstance("PKCS12");
      try (InputStream in = Files.newInputStream(p12)) {
        ks.load(in, "changeit".toCharArray());
      }
      kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(ks, "changeit".toCharArray());
    }
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
    return ctx;
  }

  /** The certificates of a PEM file. */
  public static List<X509Certificate> certificates(Path pem) throws Exception {
    try (InputStream in = Files.newInputStream(pem)) {
      List<X509Certificate> out = new ArrayList<>();
      CertificateFactory.getInstance("X.509").generateCertificates(in).forEach(c -> out.add((X509Certificate) c));
      return out;
    }
  }

  /** Runs {@code openssl args} in {@code dir}; fails with its output when it fails. */
  public static String openssl(Path dir, String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add("openssl");
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IllegalStateException(String.join(" ", cmd) + " failed: " + out);
    }
    return out;
  }
}
