package dev.headroom.gateway.internal.tls;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.gateway.TestCertificates;
import dev.headroom.gateway.TestCertificates.KeyKind;
import dev.headroom.gateway.TestCertificates.Pair;
import dev.headroom.gateway.config.ListenTls;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The files of {@code listen.tls} read together: every key encoding OpenSSL writes gives the key
 * of its certificate, and a certificate outside its validity at the gateway's time (its injected
 * clock, not the wall clock) is a one-line warning naming the file, not a refusal.
 */
class TlsMaterialTest {
  @TempDir Path dir;

  @Test
  void everyEncodingReadsAndAnExpiredCertificateIsAWarning() throws Exception {
    TestCertificates ca = TestCertificates.create(dir);
    for (KeyKind kind : KeyKind.values()) {
      Pair pair = ca.server("s-" + kind, kind);
      TlsMaterial m = TlsMaterial.read(new ListenTls(pair.certificate(), pair.key(), ListenTls.DEFAULT_PROTOCOLS,
          ListenTls.ClientAuth.NONE, Optional.empty()));
      assertThat(m.key().getAlgorithm()).as(kind.name()).isEqualTo(kind.name().startsWith("RSA") ? "RSA" : "EC");
      assertThat(m.chain()).hasSize(1);
      Instant notAfter = m.chain().get(0).getNotAfter().toInstant();
      assertThat(m.validityWarning("cert.pem", notAfter.minusSeconds(60))).isEmpty();
      assertThat(m.validityWarning("cert.pem", notAfter.plus(Duration.ofDays(1)))).hasValueSatisfying(w ->
          assertThat(w).isEqualTo("listen.tls.certificate: \"cert.pem\" (CN=localhost) expired at " + notAfter
              + "; clients will refuse it until it is renewed"));
      assertThat(m.validityWarning("cert.pem", m.chain().get(0).getNotBefore().toInstant().minusSeconds(1)))
          .hasValueSatisfying(w -> assertThat(w).contains("is not valid before"));
    }
  }

  @Test
  void aSec1KeysCurveIsReadFromItsParameters() throws Exception {
    TestCertificates ca = TestCertificates.create(dir);
    Pair pair = ca.server("ec", KeyKind.EC_TRADITIONAL);
    PemFiles.Block sec1 = PemFiles.blocks("k", pair.key(), "a key").stream()
        .filter(b -> b.label().equals("EC PRIVATE KEY")).findFirst().orElseThrow();
    // prime256v1, 1.2.840.10045.3.1.7
    assertThat(PemFiles.sec1Curve(sec1.der())).hasValueSatisfying(curve -> assertThat(curve).containsExactly(
        new byte[] {0x06, 0x08, 0x2a, (byte) 0x86, 0x48, (byte) 0xce, 0x3d, 0x03, 0x01, 0x07}));
    assertThat(PemFiles.sec1Curve(new byte[] {0x30, 0x03, 0x02, 0x01, 0x01})).isEmpty();
    assertThat(PemFiles.sec1Curve(new byte[] {0x30, 0x7f})).isEmpty();
  }
}
