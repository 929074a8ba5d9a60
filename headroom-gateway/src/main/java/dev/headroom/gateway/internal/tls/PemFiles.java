package dev.headroom.gateway.internal.tls;

import dev.headroom.http.IoFailure;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.interfaces.RSAKey;
import java.security.spec.AlgorithmParameterSpec;
import java.security.spec.MGF1ParameterSpec;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.PSSParameterSpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one PEM reader of the gateway (RFC 7468): the certificates and private keys of
 * {@code listen.tls} ({@link TlsMaterial}) and of {@code upstreams.NAME.tls} (the configuration's
 * upstream reader). Certificates are {@code CERTIFICATE} blocks, read by the JDK's X.509 factory.
 * A private key is one block, in any of the encodings OpenSSL writes unencrypted, turned into the
 * one the JDK reads (PKCS#8):
 *
 * <ul>
 *   <li>{@code PRIVATE KEY}: PKCS#8 (RFC 5958 section 2, what {@code openssl} writes by default),
 *       read as it is: RSA, EC, Ed25519, Ed448 or RSASSA-PSS;
 *   <li>{@code RSA PRIVATE KEY}: PKCS#1 (RFC 8017 appendix A.1.2), wrapped in a PKCS#8
 *       {@code PrivateKeyInfo} whose algorithm is rsaEncryption with NULL parameters;
 *   <li>{@code EC PRIVATE KEY}: SEC 1 (RFC 5915 section 3), wrapped in a {@code PrivateKeyInfo}
 *       whose algorithm is id-ecPublicKey with the named curve the SEC 1 structure holds in its
 *       {@code [0]} parameters (OpenSSL always writes them). An {@code EC PARAMETERS} block before
 *       it, as {@code openssl ecparam -genkey} writes, is passed over.
 * </ul>
 *
 * <p>The wrapping is a few lines of DER (X.690), which spares a Bouncy Castle dependency.
 * Encrypted keys are refused, both {@code ENCRYPTED PRIVATE KEY} (RFC 5958 section 3) and a
 * traditional block with {@code Proc-Type: 4,ENCRYPTED} headers (RFC 1421 section 4.6.1.1): the
 * gateway has nowhere to take a passphrase from. A file of more than one private key is refused
 * too, rather than one of them chosen.
 *
 * <p>A file is read whole, up to {@value #MAX_BYTES} bytes (a longer one, or a device that never
 * ends, is refused after that many). Every failure is a {@link TlsFileException} of one line:
 * the setting, the file, what it holds or is instead, and what was expected, such as
 * {@code listen.tls.key: "/etc/headroom/cert.pem" holds no private key, only CERTIFICATE; expected
 * a PEM file of one unencrypted private key (...)}. A key file's contents are secret: a message
 * names the labels of its blocks, never their bytes. Stateless.
 */
public final class PemFiles {
  /** The largest PEM file read: far above any certificate chain or CA bundle, small enough to hold in memory at load. */
  static final int MAX_BYTES = 1 << 20;

  /** What a certificate file is expected to hold, in every message about one. */
  static final String CERTIFICATES_EXPECTED =
      "a PEM file of one or more certificates (-----BEGIN CERTIFICATE-----)";
  /** What a key file is expected to hold, in every message about one. */
  static final String KEY_EXPECTED = "a PEM file of one unencrypted private key (-----BEGIN PRIVATE KEY-----,"
      + " RSA PRIVATE KEY or EC PRIVATE KEY)";
  private static final String UNENCRYPTED = "expected the key unencrypted (openssl pkcs8 -topk8 -nocrypt), readable"
      + " by the gateway's user only: the gateway has no passphrase to decrypt it with";

  /** A block, RFC 7468 section 2: the label is repeated in its end line; text around blocks is passed over. */
  private static final Pattern BLOCK = Pattern.compile(
      "-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \\1-----", Pattern.DOTALL);

  /** rsaEncryption, 1.2.840.113549.1.1.1, as a DER OBJECT IDENTIFIER. */
  private static final byte[] RSA_ENCRYPTION = {0x06, 0x09, 0x2a, (byte) 0x86, 0x48, (byte) 0x86, (byte) 0xf7,
      0x0d, 0x01, 0x01, 0x01};
  /** id-ecPublicKey, 1.2.840.10045.2.1, as a DER OBJECT IDENTIFIER (its curve follows it in the algorithm identifier). */
  private static final byte[] EC_PUBLIC_KEY = {0x06, 0x07, 0x2a, (byte) 0x86, 0x48, (byte) 0xce, 0x3d, 0x02, 0x01};
  private static final byte[] DER_NULL = {0x05, 0x00};
  /** PrivateKeyInfo's version, v1 (RFC 5958 section 2): INTEGER 0. */
  private static final byte[] VERSION_0 = {0x02, 0x01, 0x00};

  /** The key algorithms a PKCS#8 key is tried as, in order (each of the JDK's factories refuses another's key). */
  private static final List<String> PKCS8_ALGORITHMS = List.of("RSA", "EC", "Ed25519", "Ed448", "RSASSA-PSS");

  private static final byte[] PROBE = "headroom TLS key check".getBytes(StandardCharsets.US_ASCII);

  private PemFiles() {}

  /**
   * One PEM block: its label ({@code CERTIFICATE}, {@code PRIVATE KEY}...) and its decoded bytes;
   * none for a block encrypted with RFC 1421 headers, which only a key reader refuses (a certificate
   * file may hold an encrypted key beside the certificates).
   */
  record Block(String label, byte[] der, boolean encrypted) {}

  /**
   * Every certificate of {@code file}, in file order (a chain, the leaf first, or a bundle of
   * CAs); at least one. Blocks of other labels beside them are passed over.
   *
   * @param setting the setting that names the file, the first words of a refusal
   * @throws TlsFileException when the file cannot be read, holds no CERTIFICATE block, or a block
   *     is not an X.509 certificate
   */
  public static List<X509Certificate> certificates(String setting, Path file) {
    List<Block> blocks = blocks(setting, file, CERTIFICATES_EXPECTED);
    List<X509Certificate> out = new ArrayList<>();
    try {
      CertificateFactory f = CertificateFactory.getInstance("X.509");
      for (Block b : blocks) {
        if (b.label().equals("CERTIFICATE") && !b.encrypted()) {
          out.add((X509Certificate) f.generateCertificate(new ByteArrayInputStream(b.der())));
        }
      }
    } catch (CertificateException | ClassCastException e) {
      throw new TlsFileException(setting, file, "holds a CERTIFICATE block that is not an X.509 certificate;"
          + " expected " + CERTIFICATES_EXPECTED);
    }
    if (out.isEmpty()) {
      throw new TlsFileException(setting, file, "holds no certificate, only " + labels(blocks) + "; expected "
          + CERTIFICATES_EXPECTED);
    }
    return List.copyOf(out);
  }

  /**
   * The private key of {@code file}: its one {@code PRIVATE KEY}, {@code RSA PRIVATE KEY} or
   * {@code EC PRIVATE KEY} block.
   *
   * @param setting the setting that names the file, the first words of a refusal
   * @throws TlsFileException when the file cannot be read, holds no such block or more than one,
   *     an encrypted key, or a block that is not a key of the form its label says
   */
  public static PrivateKey privateKey(String setting, Path file) {
    List<Block> blocks = blocks(setting, file, KEY_EXPECTED);
    Block key = null;
    for (Block b : blocks) {
      switch (b.label()) {
        case "ENCRYPTED PRIVATE KEY" -> throw new TlsFileException(setting, file, "holds an encrypted private key"
            + " (ENCRYPTED PRIVATE KEY); " + UNENCRYPTED);
        case "PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY" -> {
          if (b.encrypted()) {
            throw new TlsFileException(setting, file, "holds an encrypted " + b.label() + " (Proc-Type: 4,ENCRYPTED); "
                + UNENCRYPTED);
          }
          if (key != null) {
            throw new TlsFileException(setting, file, "holds more than one private key (" + key.label() + ", "
                + b.label() + "); expected " + KEY_EXPECTED);
          }
          key = b;
        }
        default -> { } // EC PARAMETERS before an EC key, a certificate beside the key: not the key
      }
    }
    if (key == null) {
      throw new TlsFileException(setting, file, "holds no private key, only " + labels(blocks) + "; expected "
          + KEY_EXPECTED);
    }
    return switch (key.label()) {
      case "RSA PRIVATE KEY" -> pkcs8(setting, file, key,
          sequence(VERSION_0, sequence(RSA_ENCRYPTION, DER_NULL), octets(key.der())), List.of("RSA"));
      case "EC PRIVATE KEY" -> {
        byte[] sec1 = key.der();
        byte[] curve = sec1Curve(sec1).orElseThrow(() -> new TlsFileException(setting, file, "holds an EC PRIVATE"
            + " KEY without its named curve; expected the key as OpenSSL writes it (with its named curve) or"
            + " PKCS#8 (openssl pkcs8 -topk8 -nocrypt)"));
        yield pkcs8(setting, file, key, sequence(VERSION_0, sequence(EC_PUBLIC_KEY, curve), octets(sec1)),
            List.of("EC"));
      }
      default -> pkcs8(setting, file, key, key.der(), PKCS8_ALGORITHMS);
    };
  }

  /**
   * The private key of {@code file}, checked to be the key of {@code certificate} (read from
   * {@code certificateFile}): a probe signed with the key verifies with the certificate's public
   * key. That works alike for every algorithm read: SHA-256 with RSA or ECDSA, Ed25519 and Ed448
   * as themselves, RSASSA-PSS with the key's own parameters (SHA-256 where it has none).
   *
   * @throws TlsFileException as {@link #privateKey}, or naming both files when the key is not the
   *     certificate's
   */
  public static PrivateKey privateKeyOf(String setting, Path file, Path certificateFile, X509Certificate certificate) {
    PrivateKey key = privateKey(setting, file);
    if (!signsFor(key, certificate)) {
      throw new TlsFileException(setting, file, "does not match the certificate in \"" + certificateFile + "\" ("
          + TlsMaterial.subject(certificate)
          + "); expected the private key of that certificate");
    }
    return key;
  }

  /** Whether a signature by {@code key} verifies with {@code cert}'s public key. */
  private static boolean signsFor(PrivateKey key, X509Certificate cert) {
    if (!key.getAlgorithm().equals(cert.getPublicKey().getAlgorithm())) {
      return false; // e.g. an EC key beside an RSA certificate
    }
    String algorithm = switch (key.getAlgorithm()) {
      case "RSA" -> "SHA256withRSA";
      case "EC" -> "SHA256withECDSA";
      default -> key.getAlgorithm(); // Ed25519, Ed448, RSASSA-PSS: the algorithm is its own signature
    };
    try {
      Signature sign = Signature.getInstance(algorithm);
      Signature verify = Signature.getInstance(algorithm);
      if (key.getAlgorithm().equals("RSASSA-PSS")) {
        AlgorithmParameterSpec pss = key instanceof RSAKey r && r.getParams() != null ? r.getParams()
            : new PSSParameterSpec("SHA-256", "MGF1", MGF1ParameterSpec.SHA256, 32, PSSParameterSpec.TRAILER_FIELD_BC);
        sign.setParameter(pss);
        verify.setParameter(pss);
      }
      sign.initSign(key, new SecureRandom());
      sign.update(PROBE);
      byte[] signature = sign.sign();
      verify.initVerify(cert.getPublicKey());
      verify.update(PROBE);
      return verify.verify(signature);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  /** The key {@code der} (a PrivateKeyInfo) holds, read by the first of {@code algorithms} that reads it. */
  private static PrivateKey pkcs8(String setting, Path file, Block block, byte[] der, List<String> algorithms) {
    for (String a : algorithms) {
      try {
        return KeyFactory.getInstance(a).generatePrivate(new PKCS8EncodedKeySpec(der));
      } catch (GeneralSecurityException | RuntimeException e) {
        // the next algorithm; a key none reads is refused below
      }
    }
    String forms = algorithms.size() == 1 ? "an " + algorithms.get(0) + " key"
        : "a key of " + String.join(", ", algorithms.subList(0, algorithms.size() - 1)) + " or "
            + algorithms.get(algorithms.size() - 1);
    throw new TlsFileException(setting, file, "holds a " + block.label() + " block that is damaged or of another"
        + " algorithm; expected " + forms);
  }

  /** The PEM blocks of {@code file}, in order; at least one. */
  static List<Block> blocks(String setting, Path file, String expected) {
    byte[] bytes;
    try (InputStream in = Files.newInputStream(file)) {
      bytes = in.readNBytes(MAX_BYTES + 1);
    } catch (NoSuchFileException e) {
      throw new TlsFileException(setting, file, "does not exist; expected " + expected);
    } catch (AccessDeniedException e) {
      throw new TlsFileException(setting, file, "cannot be read (permission denied); expected " + expected
          + ", readable by the gateway's user");
    } catch (IOException e) {
      throw new TlsFileException(setting, file, "cannot be read (" + IoFailure.inWords(e) + "); expected "
          + expected);
    }
    if (bytes.length > MAX_BYTES) {
      throw new TlsFileException(setting, file, "is larger than " + MAX_BYTES + " bytes; expected " + expected
          + " of at most " + MAX_BYTES + " bytes");
    }
    String text = new String(bytes, StandardCharsets.ISO_8859_1);
    List<Block> out = new ArrayList<>();
    Matcher m = BLOCK.matcher(text);
    while (m.find()) {
      String body = m.group(2);
      if (body.contains("Proc-Type:") || body.contains("DEK-Info:")) {
        out.add(new Block(m.group(1), new byte[0], true)); // RFC 1421 section 4.6.1.1 headers: encrypted
        continue;
      }
      try {
        out.add(new Block(m.group(1), Base64.getMimeDecoder().decode(body.strip()), false));
      } catch (IllegalArgumentException e) {
        throw new TlsFileException(setting, file, "holds a " + m.group(1) + " block that is not base64; expected "
            + expected);
      }
    }
    if (out.isEmpty()) {
      throw new TlsFileException(setting, file, "is not PEM (no -----BEGIN ...----- block); expected " + expected);
    }
    return out;
  }

  /** The distinct labels of {@code blocks}, in order: what a file holds instead, its contents never quoted. */
  private static String labels(List<Block> blocks) {
    Set<String> labels = new LinkedHashSet<>();
    blocks.forEach(b -> labels.add(b.label()));
    return String.join(", ", labels);
  }

  // ---- DER, just enough to wrap a traditional key into PKCS#8 (X.690) ----

  /**
   * The named curve of a SEC 1 {@code ECPrivateKey} (RFC 5915 section 3: SEQUENCE { INTEGER 1,
   * OCTET STRING, [0] ECParameters OPTIONAL, [1] BIT STRING OPTIONAL }): the OBJECT IDENTIFIER in
   * its {@code [0]} element, as DER; empty when it has none (or explicit parameters) or is not DER.
   */
  static Optional<byte[]> sec1Curve(byte[] der) {
    try {
      if (der.length < 2 || der[0] != 0x30) {
        return Optional.empty();
      }
      int[] seq = header(der, 0);
      int at = seq[0];
      int end = seq[0] + seq[1];
      while (at < end) {
        int[] h = header(der, at);
        if ((der[at] & 0xff) == 0xa0) {
          if (der[h[0]] != 0x06) {
            return Optional.empty();
          }
          int[] oid = header(der, h[0]);
          byte[] out = new byte[oid[0] - h[0] + oid[1]];
          System.arraycopy(der, h[0], out, 0, out.length);
          return Optional.of(out);
        }
        at = h[0] + h[1];
      }
      return Optional.empty();
    } catch (ArrayIndexOutOfBoundsException e) {
      return Optional.empty(); // not DER: a length that runs past the end
    }
  }

  /** The offset of a DER element's content and its length, from the offset of its tag (short or long form, at most 3 bytes). */
  private static int[] header(byte[] der, int at) {
    int len = der[at + 1] & 0xff;
    int content = at + 2;
    if (len >= 0x80) {
      int n = len & 0x7f;
      if (n == 0 || n > 3) {
        throw new ArrayIndexOutOfBoundsException("unsupported DER length");
      }
      len = 0;
      for (int i = 0; i < n; i++) {
        len = (len << 8) | (der[content + i] & 0xff);
      }
      content += n;
    }
    if (content + len > der.length) {
      throw new ArrayIndexOutOfBoundsException("DER element runs past its end");
    }
    return new int[] {content, len};
  }

  private static byte[] sequence(byte[]... parts) {
    return tagged(0x30, parts);
  }

  private static byte[] octets(byte[] content) {
    return tagged(0x04, content);
  }

  /** A DER element: {@code tag}, the definite length of {@code parts} together, then they. */
  private static byte[] tagged(int tag, byte[]... parts) {
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      body.writeBytes(p);
    }
    int n = body.size();
    ByteArrayOutputStream out = new ByteArrayOutputStream(n + 6);
    out.write(tag);
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
    out.writeBytes(body.toByteArray());
    return out.toByteArray();
  }
}
