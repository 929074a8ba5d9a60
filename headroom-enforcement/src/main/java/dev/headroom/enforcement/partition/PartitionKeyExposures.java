package dev.headroom.enforcement.partition;

import dev.headroom.PartitionKey;
import dev.headroom.QuotaPolicy;
import dev.headroom.http.PartitionKeyExposure;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.Base64;
import java.util.Objects;
import java.util.Optional;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The {@link PartitionKeyExposure} choices for the {@code pk} parameter
 * (draft-ietf-httpapi-ratelimit-headers-09 sections 3.1.4, 4.1.3, 6.1 and 7.1). None of them ever
 * sends a raw credential: the partition key itself already holds only a hash of an API key (see
 * {@link PartitionKeyDerivation}), and what is sent is a hash of that.
 *
 * <h2>The predictable hash, so that a client can compute its own {@code pk}</h2>
 *
 * <p>Section 6.1 asks servers to document how the key is made so that a client can predict
 * it (section 7.1). With {@link #predictableHash()} the {@code pk} Byte Sequence is
 *
 * <pre>
 *   pk = first 16 bytes of SHA-256( UTF-8(policy name) || 0x00 || UTF-8(partition key) )
 * </pre>
 *
 * <p>where the partition key is the text {@link PartitionKeyDerivation} documents, for example
 * {@code ip:203.0.113.7}, or for an API key {@code key:} followed by the lowercase hex of the first
 * 16 bytes of SHA-256 of the key. Worked example (policy {@code hourly}, partition
 * {@code ip:203.0.113.7}): {@code pk=:} + base64 of those 16 bytes + {@code :}; the test
 * {@code PartitionKeyExposuresTest} recomputes it from this description alone. The policy name is
 * part of the input so that one caller's {@code pk} values for two policies cannot be correlated.
 *
 * <p>A predictable hash of a small space (IPv4 addresses) can be reversed by whoever sees it; use
 * {@link #hmacSha256(byte[])} when the {@code pk} may travel through parties that should not learn
 * the client's address.
 *
 * <h2>The keyed hash</h2>
 *
 * <p>{@link #hmacSha256(byte[])}: {@code pk} = first 16 bytes of HMAC-SHA256(key, same input as
 * above). Stable for one client as long as the key is, unpredictable without it.
 *
 * <p>Every exposure returned is immutable and thread-safe.
 */
public final class PartitionKeyExposures {

  /** Bytes of every {@code pk} sent: 128 bits, far beyond any accidental collision. */
  public static final int PK_LENGTH = 16;

  /** Shortest accepted HMAC key: 32 bytes, the SHA-256 output size (RFC 2104 section 3). */
  public static final int MIN_HMAC_KEY_LENGTH = 32;

  /** Longest accepted HMAC key. */
  public static final int MAX_HMAC_KEY_LENGTH = 1024;

  private PartitionKeyExposures() {}

  /** Sends no {@code pk}. */
  public static PartitionKeyExposure off() {
    return PartitionKeyExposure.off();
  }

  /** Sends the documented, client-computable hash described in the class comment. */
  public static PartitionKeyExposure predictableHash() {
    return new PartitionKeyExposure() {
      @Override
      public Optional<byte[]> pk(QuotaPolicy policy, PartitionKey key) {
        return Optional.of(Arrays.copyOf(PartitionKeyDerivation.sha256(input(policy, key)), PK_LENGTH));
      }

      @Override
      public String toString() {
        return "pk=sha256";
      }
    };
  }

  /**
   * Sends a keyed HMAC-SHA256 of the partition.
   *
   * @throws IllegalArgumentException when the key is shorter than {@value #MIN_HMAC_KEY_LENGTH}
   *     or longer than {@value #MAX_HMAC_KEY_LENGTH} bytes
   */
  public static PartitionKeyExposure hmacSha256(byte[] key) {
    Objects.requireNonNull(key, "key");
    if (key.length < MIN_HMAC_KEY_LENGTH || key.length > MAX_HMAC_KEY_LENGTH) {
      throw new IllegalArgumentException("pk hmac key: expected " + MIN_HMAC_KEY_LENGTH + " to " + MAX_HMAC_KEY_LENGTH
          + " bytes (at least 256 random bits), got " + key.length + " bytes");
    }
    Mac prototype;
    try {
      prototype = Mac.getInstance("HmacSHA256");
      prototype.init(new SecretKeySpec(key.clone(), "HmacSHA256"));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is required of every Java platform", e);
    }
    Mac initialised = prototype;
    return new PartitionKeyExposure() {
      @Override
      public Optional<byte[]> pk(QuotaPolicy policy, PartitionKey partition) {
        Mac mac;
        try {
          mac = (Mac) initialised.clone();
        } catch (CloneNotSupportedException e) {
          throw new IllegalStateException("HmacSHA256 of this platform cannot be cloned", e);
        }
        return Optional.of(Arrays.copyOf(mac.doFinal(input(policy, partition)), PK_LENGTH));
      }

      @Override
      public String toString() {
        return "pk=hmac-sha256";
      }
    };
  }

  /**
   * {@link #hmacSha256(byte[])} with the key given in base64 (standard or URL-safe alphabet), as
   * written in configuration.
   *
   * @throws IllegalArgumentException when the text is not base64 or the key length is refused;
   *     the message never repeats the key
   */
  public static PartitionKeyExposure hmacSha256Base64(String base64Key) {
    if (base64Key == null) {
      throw new IllegalArgumentException("pk hmac key: expected base64 of at least " + MIN_HMAC_KEY_LENGTH + " bytes, got null");
    }
    String text = base64Key.strip();
    byte[] key;
    try {
      key = text.indexOf('-') >= 0 || text.indexOf('_') >= 0
          ? Base64.getUrlDecoder().decode(text)
          : Base64.getDecoder().decode(text);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("pk hmac key: expected base64 of at least " + MIN_HMAC_KEY_LENGTH
          + " bytes, got " + text.length() + " characters that are not base64", e);
    }
    return hmacSha256(key);
  }

  static byte[] input(QuotaPolicy policy, PartitionKey key) {
    byte[] name = policy.name().getBytes(StandardCharsets.UTF_8);
    byte[] value = key.utf8();
    byte[] out = new byte[name.length + 1 + value.length];
    System.arraycopy(name, 0, out, 0, name.length);
    System.arraycopy(value, 0, out, name.length + 1, value.length);
    return out;
  }
}
