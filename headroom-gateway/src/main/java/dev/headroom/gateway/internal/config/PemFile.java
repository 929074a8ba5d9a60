package dev.headroom.gateway.internal.config;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Certificates and private keys in PEM files (RFC 7468): what {@code upstreams.NAME.tls} names.
 * Certificates are {@code CERTIFICATE} blocks, read by the JDK's X.509 factory. Private keys are
 * {@code PRIVATE KEY} blocks (unencrypted PKCS#8, RFC 5958, what {@code openssl} writes by
 * default), or the traditional forms that older tools write: {@code RSA PRIVATE KEY} (PKCS#1,
 * RFC 8017 appendix A.1.2) and {@code EC PRIVATE KEY} (SEC 1, RFC 5915). A traditional key is
 * wrapped into PKCS#8 here (its algorithm identifier put in front of it, in DER) so that the JDK's
 * {@link KeyFactory} reads every form the same way. Encrypted keys are refused: the gateway has
 * nowhere to take a passphrase from.
 *
 * <p>Kept small and on its own so that it can become the one PEM reader of the gateway (the
 * listener's certificate and key are the same kind of file).
 *
 * <p>A file is read whole, up to {@link #MAX_BYTES}. Every failure is an {@link IOException}
 * whose message says what the file holds instead of what was expected, without quoting it
 * (a key file's contents are secret). Stateless.
 */
final class PemFile {
  /** The largest PEM file read: far above any certificate chain or CA bundle, small enough to hold in memory at load. */
  static final int MAX_BYTES = 1 << 20;

  private static final Pattern BLOCK = Pattern.compile(
      "-----BEGIN ([A-Z0-9 ]+)-----\\s*([A-Za-z0-9+/=\\s]*?)-----END \\1-----");
  /** rsaEncryption, 1.2.840.113549.1.1.1, with its NULL parameters: the algorithm identifier of a PKCS#1 key. */
  private static final byte[] RSA_ALGORITHM = {0x30, 0x0d, 0x06, 0x09, 0x2a, (byte) 0x86, 0x48, (byte) 0x86,
      (byte) 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00};
  /** id-ecPublicKey, 1.2.840.10045.2.1 (its curve follows it in the algorithm identifier). */
  private static final byte[] EC_PUBLIC_KEY = {0x06, 0x07, 0x2a, (byte) 0x86, 0x48, (byte) 0xce, 0x3d, 0x02, 0x01};

  private PemFile() {}

  /** One PEM block: its label ({@code CERTIFICATE}, {@code PRIVATE KEY}...) and its decoded bytes. */
  private record Block(String label, byte[] der) {}

  /**
   * Every certificate of {@code file}, in order (a chain, or a bundle of CAs).
   *
   * @throws IOException when the file cannot be read, holds no CERTIFICATE block, or a block is not an X.509 certificate
   */
  static List<X509Certificate> certificates(Path file) throws IOException {
    List<X509Certificate> out = new ArrayList<>();
    try {
      CertificateFactory factory = CertificateFactory.getInstance("X.509");
      for (Block b : blocks(file)) {
        if (b.label().equals("CERTIFICATE")) {
          Certificate c = factory.generateCertificate(new ByteArrayInputStream(b.der()));
          out.add((X509Certificate) c);
        }
      }
    } catch (CertificateException | ClassCastException e) {
      throw new IOException("a CERTIFICATE block is not an X.509 certificate");
    }
    if (out.isEmpty()) {
      throw new IOException("it holds no PEM CERTIFICATE block");
    }
    return List.copyOf(out);
  }

  /**
   * The private key of {@code file}: its one PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY block.
   *
   * @throws IOException when the file cannot be read, holds no such block, or more than one, or an
   *     encrypted key, or the block is not a key of the form its label says
   */
  static PrivateKey privateKey(Path file) throws IOException {
    Block key = null;
    for (Block b : blocks(file)) {
      switch (b.label()) {
        case "ENCRYPTED PRIVATE KEY" -> throw new IOException("the key is encrypted; expected an unencrypted key");
        case "PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY" -> {
          if (key != null) {
            throw new IOException("it holds more than one private key");
          }
          key = b;
        }
        default -> { } // EC PARAMETERS before an EC key, a certificate beside the key: not the key
      }
    }
    if (key == null) {
      throw new IOException("it holds no PEM PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY block");
    }
    try {
      return switch (key.label()) {
        case "RSA PRIVATE KEY" -> KeyFactory.getInstance("RSA")
            .generatePrivate(new PKCS8EncodedKeySpec(pkcs8(RSA_ALGORITHM, key.der())));
        case "EC PRIVATE KEY" -> KeyFactory.getInstance("EC")
            .generatePrivate(new PKCS8EncodedKeySpec(pkcs8(ecAlgorithm(key.der()), key.der())));
        default -> pkcs8Key(key.der());
      };
    } catch (GeneralSecurityException | IllegalArgumentException e) {
      throw new IOException("the " + key.label() + " block is not a valid key of that form");
    }
  }

  /** The key algorithms a PKCS#8 key is tried as, in order (the JDK's factories check the key's own identifier). */
  private static final List<String> PKCS8_ALGORITHMS = List.of("RSA", "EC", "Ed25519", "Ed448", "RSASSA-PSS");

  /** A PKCS#8 key of any algorithm {@link #PKCS8_ALGORITHMS} names: each factory refuses another's key. */
  private static PrivateKey pkcs8Key(byte[] der) throws GeneralSecurityException {
    GeneralSecurityException last = null;
    for (String algorithm : PKCS8_ALGORITHMS) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
      } catch (GeneralSecurityException e) {
        last = e;
      }
    }
    throw last;
  }

  private static List<Block> blocks(Path file) throws IOException {
    byte[] bytes;
    try (InputStream in = Files.newInputStream(file)) {
      bytes = in.readNBytes(MAX_BYTES + 1);
    }
    if (bytes.length > MAX_BYTES) {
      throw new IOException("it is larger than " + MAX_BYTES + " bytes");
    }
    String text = new String(bytes, StandardCharsets.US_ASCII);
    List<Block> out = new ArrayList<>();
    Matcher m = BLOCK.matcher(text);
    while (m.find()) {
      try {
        out.add(new Block(m.group(1), Base64.getMimeDecoder().decode(m.group(2))));
      } catch (IllegalArgumentException e) {
        throw new IOException("its " + m.group(1) + " block is not valid base64");
      }
    }
    if (out.isEmpty()) {
      throw new IOException("it is not PEM (no -----BEGIN ...----- block)");
    }
    return out;
  }

  // ---- DER, just enough to wrap a traditional key into PKCS#8 (X.690) ----

  /** PrivateKeyInfo: SEQUENCE { INTEGER 0, algorithm, OCTET STRING key }. */
  private static byte[] pkcs8(byte[] algorithm, byte[] key) {
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    body.writeBytes(new byte[] {0x02, 0x01, 0x00});
    body.writeBytes(algorithm);
    body.writeBytes(tlv(0x04, key));
    return tlv(0x30, body.toByteArray());
  }

  /**
   * The algorithm identifier of a SEC 1 key, SEQUENCE { id-ecPublicKey, curve }: the curve is the
   * OID in the key's {@code [0] parameters} (RFC 5915 section 3: SEQUENCE { INTEGER 1, OCTET
   * STRING, [0] ECParameters OPTIONAL, [1] BIT STRING OPTIONAL }).
   */
  private static byte[] ecAlgorithm(byte[] sec1) {
    int[] at = {0};
    expect(sec1, at, 0x30);
    length(sec1, at);
    skip(sec1, at, 0x02);
    skip(sec1, at, 0x04);
    expect(sec1, at, 0xa0);
    int n = length(sec1, at);
    if (n <= 0 || at[0] + n > sec1.length || sec1[at[0]] != 0x06) {
      throw new IllegalArgumentException("no named curve");
    }
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    body.writeBytes(EC_PUBLIC_KEY);
    body.write(sec1, at[0], n);
    return tlv(0x30, body.toByteArray());
  }

  private static void expect(byte[] der, int[] at, int tag) {
    if (at[0] >= der.length || (der[at[0]] & 0xff) != tag) {
      throw new IllegalArgumentException("unexpected DER tag");
    }
    at[0]++;
  }

  private static void skip(byte[] der, int[] at, int tag) {
    expect(der, at, tag);
    int n = length(der, at);
    at[0] += n;
  }

  /** Reads a DER length at {@code at} (short or long form, at most 3 bytes) and moves past it. */
  private static int length(byte[] der, int[] at) {
    if (at[0] >= der.length) {
      throw new IllegalArgumentException("truncated DER");
    }
    int first = der[at[0]++] & 0xff;
    if (first < 0x80) {
      return first;
    }
    int bytes = first & 0x7f;
    if (bytes == 0 || bytes > 3 || at[0] + bytes > der.length) {
      throw new IllegalArgumentException("unsupported DER length");
    }
    int n = 0;
    for (int i = 0; i < bytes; i++) {
      n = (n << 8) | (der[at[0]++] & 0xff);
    }
    if (at[0] + n > der.length) {
      throw new IllegalArgumentException("truncated DER");
    }
    return n;
  }

  private static byte[] tlv(int tag, byte[] value) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(value.length + 6);
    out.write(tag);
    int n = value.length;
    if (n < 0x80) {
      out.write(n);
    } else if (n < 0x100) {
      out.write(0x81);
      out.write(n);
    } else if (n < 0x10000) {
      out.write(0x82);
      out.write(n >> 8);
      out.write(n);
    } else {
      out.write(0x83);
      out.write(n >> 16);
      out.write(n >> 8);
      out.write(n);
    }
    out.writeBytes(value);
    return out.toByteArray();
  }
}
