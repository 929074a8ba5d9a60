package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.headroom.gateway.TestCertificates.KeyKind;
import dev.headroom.gateway.TestCertificates.Pair;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One PEM reader for every TLS file of the gateway (RFC 7468): a bad certificate or key file is
 * refused in the same words whether {@code listen.tls} or {@code upstreams.NAME.tls} names it, in
 * one line naming the setting, the file, what it holds instead and what was expected, and never
 * quoting a key file. Each case is a real file written by {@code openssl}, read through
 * {@link GatewayConfig#parse}.
 */
class TlsFileWordsTest {
  @TempDir Path dir;
  TestCertificates ca;
  Pair server;

  @BeforeEach
  void certificates() throws Exception {
    ca = TestCertificates.create(dir);
    server = ca.server("server", KeyKind.RSA_PKCS8);
  }

  private static String yaml(String listenTls, String upstreamTls) {
    return """
        service: {name: TLS files}
        listen: {host: 127.0.0.1, port: 0%s}
        admin: {enabled: false}
        upstreams:
          up:
            url: "%s"
        %s
        routes:
          - {method: GET, path: "/**", upstream: up}
        """.formatted(listenTls.isEmpty() ? "" : ", tls: " + listenTls,
        upstreamTls.isEmpty() ? "http://127.0.0.1:1" : "https://127.0.0.1:1",
        upstreamTls.isEmpty() ? "" : "    tls: " + upstreamTls);
  }

  private static List<String> problems(String yaml) {
    ConfigException e = catchThrowableOfType(() -> GatewayConfig.parse(yaml, "tls.yaml"), ConfigException.class);
    return e == null ? List.of() : e.problems();
  }

  private static String pair(Path certificate, Path key) {
    return "{certificate: \"" + certificate + "\", key: \"" + key + "\"}";
  }

  /**
   * The one problem of {@code certificate} and {@code key} as the listener's pair and as an
   * upstream's client pair: the same after the setting's name, which is returned.
   */
  private String sameWordsForBoth(Path certificate, Path key) {
    List<String> listen = problems(yaml(pair(certificate, key), ""));
    List<String> upstream = problems(yaml("", pair(certificate, key)));
    assertThat(listen).hasSize(1);
    assertThat(upstream).hasSize(1);
    String setting = listen.get(0).substring(0, listen.get(0).indexOf(':'));
    assertThat(setting).startsWith("listen.tls.");
    assertThat(upstream.get(0)).isEqualTo(listen.get(0).replaceFirst("^listen\\.tls\\.", "upstreams.up.tls."));
    return listen.get(0).substring(setting.length() + 2);
  }

  static final String KEY_EXPECTED = "a PEM file of one unencrypted private key (-----BEGIN PRIVATE KEY-----, RSA"
      + " PRIVATE KEY or EC PRIVATE KEY)";
  static final String CERTIFICATES_EXPECTED = "a PEM file of one or more certificates (-----BEGIN CERTIFICATE-----)";

  @Test
  void aCertificateWhereTheKeyBelongsAndAKeyWhereTheCertificateBelongs() throws Exception {
    assertThat(sameWordsForBoth(server.certificate(), server.certificate())).isEqualTo("\"" + server.certificate()
        + "\" holds no private key, only CERTIFICATE; expected " + KEY_EXPECTED);
    String words = sameWordsForBoth(server.key(), server.key());
    assertThat(words).isEqualTo("\"" + server.key() + "\" holds no certificate, only PRIVATE KEY; expected "
        + CERTIFICATES_EXPECTED);
    // the key file's contents are secret: not one of its base64 lines is quoted
    Files.readAllLines(server.key()).stream().filter(l -> !l.startsWith("-----"))
        .forEach(line -> assertThat(words).doesNotContain(line));
  }

  @Test
  void encryptedKeysAreRefusedInBothForms_rfc5958_3() throws Exception {
    Path pkcs8 = dir.resolve("encrypted.key");
    TestCertificates.openssl(dir, "pkcs8", "-topk8", "-in", server.key().toString(), "-passout", "pass:secret",
        "-out", pkcs8.toString());
    assertThat(sameWordsForBoth(server.certificate(), pkcs8)).isEqualTo("\"" + pkcs8 + "\" holds an encrypted"
        + " private key (ENCRYPTED PRIVATE KEY); expected the key unencrypted (openssl pkcs8 -topk8 -nocrypt),"
        + " readable by the gateway's user only: the gateway has no passphrase to decrypt it with");
    // the traditional form: RSA PRIVATE KEY with Proc-Type and DEK-Info headers (RFC 1421 section 4.6.1.1)
    Path traditional = dir.resolve("encrypted-rsa.key");
    TestCertificates.openssl(dir, "rsa", "-in", server.key().toString(), "-traditional", "-aes256", "-passout",
        "pass:secret", "-out", traditional.toString());
    assertThat(Files.readString(traditional)).contains("Proc-Type: 4,ENCRYPTED");
    assertThat(sameWordsForBoth(server.certificate(), traditional)).isEqualTo("\"" + traditional + "\" holds an"
        + " encrypted RSA PRIVATE KEY (Proc-Type: 4,ENCRYPTED); expected the key unencrypted (openssl pkcs8 -topk8"
        + " -nocrypt), readable by the gateway's user only: the gateway has no passphrase to decrypt it with");
    // beside the certificate, in the certificate's file, the encrypted key is not read, so not refused
    Path bundle = dir.resolve("bundle.pem");
    Files.writeString(bundle, Files.readString(server.certificate()) + Files.readString(traditional));
    assertThat(problems(yaml(pair(bundle, server.key()), ""))).isEmpty();
    assertThat(problems(yaml("", pair(bundle, server.key())))).isEmpty();
  }

  @Test
  void aFileOfTwoKeysAndAnotherCertificatesKeyAreRefused() throws Exception {
    Pair other = ca.server("other", KeyKind.EC_TRADITIONAL);
    Path two = dir.resolve("two.key");
    Files.writeString(two, Files.readString(server.key()) + Files.readString(other.key()));
    assertThat(sameWordsForBoth(server.certificate(), two)).isEqualTo("\"" + two + "\" holds more than one private"
        + " key (PRIVATE KEY, EC PRIVATE KEY); expected " + KEY_EXPECTED);
    assertThat(sameWordsForBoth(server.certificate(), other.key())).isEqualTo("\"" + other.key() + "\" does not"
        + " match the certificate in \"" + server.certificate() + "\" (CN=localhost); expected the private key of"
        + " that certificate");
  }

  @Test
  void aFileTooLargeOrNotPemIsRefused() throws Exception {
    Path large = dir.resolve("large.pem");
    Files.write(large, new byte[(1 << 20) + 1]);
    assertThat(sameWordsForBoth(large, server.key())).isEqualTo("\"" + large + "\" is larger than 1048576 bytes;"
        + " expected " + CERTIFICATES_EXPECTED + " of at most 1048576 bytes");
    Path der = dir.resolve("server.der");
    TestCertificates.openssl(dir, "pkey", "-in", server.key().toString(), "-outform", "DER", "-out", der.toString());
    assertThat(sameWordsForBoth(server.certificate(), der)).isEqualTo("\"" + der + "\" is not PEM (no -----BEGIN"
        + " ...----- block); expected " + KEY_EXPECTED);
  }

  @Test
  void anEd25519KeyInPkcs8IsAnUpstreamsClientKeyButNotTheListeners_rfc8410() throws Exception {
    TestCertificates.openssl(dir, "genpkey", "-algorithm", "ED25519", "-out", "ed.key");
    TestCertificates.openssl(dir, "req", "-new", "-key", "ed.key", "-subj", "/CN=localhost", "-out", "ed.csr");
    TestCertificates.openssl(dir, "x509", "-req", "-in", "ed.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-set_serial", "77", "-days", "3", "-out", "ed.pem");
    Path cert = dir.resolve("ed.pem");
    Path key = dir.resolve("ed.key");
    assertThat(problems(yaml("", pair(cert, key)))).isEmpty();
    // the listener's engine would take it and fail every handshake: refused at load
    assertThat(problems(yaml(pair(cert, key), ""))).containsExactly("listen.tls.key: \"" + key + "\" holds an"
        + " Ed25519 key; expected an RSA or EC key (the listener's TLS engine does not serve with an Ed25519 key)");
    // an Ed25519 key beside an RSA certificate is not its key
    assertThat(sameWordsForBoth(server.certificate(), key)).startsWith("\"" + key + "\" does not match the"
        + " certificate in \"" + server.certificate() + "\"");
  }
}
