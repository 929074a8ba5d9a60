package dev.headroom.gateway.internal.tls;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
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
 * Reads the PEM files of the listener's TLS (RFC 7468): certificates, and a private key in any of
 * the encodings OpenSSL writes unencrypted, which are turned into the one the JDK reads (PKCS#8):
 *
 * <ul>
 *   <li>{@code PRIVATE KEY}: PKCS#8 (RFC 5208), read as it is, RSA or EC;
 *   <li>{@code RSA PRIVATE KEY}: PKCS#1 (RFC 8017 appendix A.1.2), wrapped in a PKCS#8
 *       {@code PrivateKeyInfo} whose algorithm is rsaEncryption with NULL parameters;
 *   <li>{@code EC PRIVATE KEY}: SEC1 (RFC 5915), wrapped in a {@code PrivateKeyInfo} whose
 *       algorithm is id-ecPublicKey with the curve the SEC1 structure names in its {@code [0]}
 *       parameters (OpenSSL always writes them).
 * </ul>
 *
 * <p>Every failure is a {@link TlsFileException} whose message is one line naming the setting and
 * the file: unreadable, not PEM, no key of a known kind, an encrypted key. The files are small:
 * anything above {@value #MAX_BYTES} bytes is refused before it is read. Stateless.
 */
final class PemFiles {
  /** The largest PEM file read: a long chain of certificates fits many times over. */
  static final int MAX_BYTES = 1 << 20;

  private static final Pattern BLOCK = Pattern.compile(
      "-----BEGIN ([A-Z0-9 ]+)-----\\r?\\n(.*?)-----END \\1-----", Pattern.DOTALL);

  /** rsaEncryption, 1.2.840.113549.1.1.1, as a DER OBJECT IDENTIFIER. */
  private static final byte[] RSA_ENCRYPTION = {0x06, 0x09, 0x2a, (byte) 0x86, 0x48, (byte) 0x86, (byte) 0xf7,
      0x0d, 0x01, 0x01, 0x01};
  /** id-ecPublicKey, 1.2.840.10045.2.1, as a DER OBJECT IDENTIFIER. */
  private static final byte[] EC_PUBLIC_KEY = {0x06, 0x07, 0x2a, (byte) 0x86, 0x48, (byte) 0xce, 0x3d, 0x02, 0x01};
  private static final byte[] DER_NULL = {0x05, 0x00};
  private static final byte[] VERSION_0 = {0x02, 0x01, 0x00};

  private PemFiles() {}

  /** One PEM block: its label and its decoded bytes. */
  record Block(String label, byte[] der) {}

  /** The certificates of a PEM file, in file order; at least one. */
  static List<X509Certificate> certificates(String setting, Path file) {
    List<X509Certificate> out = new ArrayList<>();
    try {
      CertificateFactory f = CertificateFactory.getInstance("X.509");
      for (Block b : blocks(setting, file, "a PEM certificate (-----BEGIN CERTIFICATE-----)")) {
        if (b.label().equals("CERTIFICATE")) {
          out.add((X509Certificate) f.generateCertificate(new ByteArrayInputStream(b.der())));
        }
      }
    } catch (CertificateException e) {
      throw new TlsFileException(setting, file, "holds a CERTIFICATE block that is not an X.509 certificate ("
          + e.getMessage() + ")");
    }
    if (out.isEmpty()) {
      throw new TlsFileException(setting, file, "holds no CERTIFICATE block; expected a PEM certificate "
          + "(-----BEGIN CERTIFICATE-----)");
    }
    return List.copyOf(out);
  }

  /** The private key of a PEM file: its first key block, PKCS#8 or traditional, RSA or EC. */
  static PrivateKey privateKey(String setting, Path file) {
    String expected = "a PEM private key (-----BEGIN PRIVATE KEY-----, RSA PRIVATE KEY or EC PRIVATE KEY)";
    for (Block b : blocks(setting, file, expected)) {
      switch (b.label()) {
        case "PRIVATE KEY":
          return pkcs8(setting, file, b.der(), "RSA", "EC");
        case "RSA PRIVATE KEY":
          return pkcs8(setting, file, sequence(VERSION_0, sequence(RSA_ENCRYPTION, DER_NULL), octets(b.der())), "RSA");
        case "EC PRIVATE KEY":
          byte[] curve = sec1Curve(b.der());
          if (curve == null) {
            throw new TlsFileException(setting, file, "holds an EC PRIVATE KEY without its curve; expected the "
                + "key as OpenSSL writes it (with its named curve) or PKCS#8 (openssl pkcs8 -topk8 -nocrypt)");
          }
          return pkcs8(setting, file, sequence(VERSION_0, sequence(EC_PUBLIC_KEY, curve), octets(b.der())), "EC");
        case "ENCRYPTED PRIVATE KEY":
          throw new TlsFileException(setting, file, "holds an encrypted private key; expected an unencrypted one "
              + "(openssl pkcs8 -topk8 -nocrypt), readable by the gateway's user only");
        default:
          break;
      }
    }
    throw new TlsFileException(setting, file, "holds no private key; expected " + expected);
  }

  private static PrivateKey pkcs8(String setting, Path file, byte[] der, String... algorithms) {
    for (String a : algorithms) {
      try {
        return KeyFactory.getInstance(a).generatePrivate(new PKCS8EncodedKeySpec(der));
      } catch (GeneralSecurityException | RuntimeException e) {
        // the next algorithm; a key none reads is reported below
      }
    }
    throw new TlsFileException(setting, file, "holds a private key that is neither RSA nor EC, or is damaged; "
        + "expected an RSA or EC key");
  }

  /** The PEM blocks of a file, in order. */
  static List<Block> blocks(String setting, Path file, String expected) {
    byte[] bytes;
    try {
      long size = Files.size(file);
      if (size > MAX_BYTES) {
        throw new TlsFileException(setting, file, "has " + size + " bytes; expected " + expected + " of at most "
            + MAX_BYTES + " bytes");
      }
      bytes = Files.readAllBytes(file);
    } catch (NoSuchFileException e) {
      throw new TlsFileException(setting, file, "does not exist; expected a file holding " + expected);
    } catch (AccessDeniedException e) {
      throw new TlsFileException(setting, file, "cannot be read (permission denied); expected a readable file "
          + "holding " + expected);
    } catch (IOException e) {
      throw new TlsFileException(setting, file, "cannot be read (" + e.getClass().getSimpleName()
          + (e.getMessage() == null ? "" : ": " + e.getMessage()) + "); expected a readable file holding " + expected);
    }
    String text = new String(bytes, StandardCharsets.ISO_8859_1);
    List<Block> out = new ArrayList<>();
    Matcher m = BLOCK.matcher(text);
    while (m.find()) {
      String body = m.group(2);
      if (body.contains("Proc-Type:") || body.contains("DEK-Info:")) {
        throw new TlsFileException(setting, file, "holds an encrypted " + m.group(1) + "; expected it unencrypted "
            + "(openssl pkcs8 -topk8 -nocrypt), readable by the gateway's user only");
      }
      try {
        out.add(new Block(m.group(1), Base64.getMimeDecoder().decode(body)));
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

  /**
   * The curve of a SEC1 {@code ECPrivateKey} (RFC 5915 section 3): the OBJECT IDENTIFIER in its
   * context-specific {@code [0]} element, as DER; null when it has none or is not DER.
   */
  static byte[] sec1Curve(byte[] der) {
    try {
      int[] seq = header(der, 0);
      if (der[0] != 0x30) {
        return null;
      }
      int at = seq[0];
      int end = seq[0] + seq[1];
      while (at < end) {
        int[] h = header(der, at);
        if ((der[at] & 0xff) == 0xa0) {
          int[] oid = header(der, h[0]);
          if (der[h[0]] != 0x06) {
            return null;
          }
          byte[] out = new byte[oid[0] - h[0] + oid[1]];
          System.arraycopy(der, h[0], out, 0, out.length);
          return out;
        }
        at = h[0] + h[1];
      }
      return null;
    } catch (ArrayIndexOutOfBoundsException e) {
      return null;
    }
  }

  /** The offset of a DER element's content and its length, from the offset of its tag. */
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
