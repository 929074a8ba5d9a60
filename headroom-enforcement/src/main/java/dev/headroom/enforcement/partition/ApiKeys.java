package dev.headroom.enforcement.partition;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * API keys as the plan resolvers and allow lists ({@link AllowList}) keep them: never raw, only as the lowercase hex SHA-256 of the
 * key's UTF-8 bytes ({@code printf %s "$KEY" | sha256sum}), so that a stolen key file or table
 * gives no key away. A key is read from one request header (one field line, 1 to
 * {@value #MAX_KEY_LENGTH} visible ASCII characters); anything else is no key.
 */
public final class ApiKeys {
  /** Longest key read from a request; a longer value is no key (and is never hashed). */
  public static final int MAX_KEY_LENGTH = 256;

  private ApiKeys() {}

  /** The lowercase hex SHA-256 of {@code key}'s UTF-8 bytes, as stored in a key file or table. */
  public static String sha256(String key) {
    try {
      byte[] d = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(d);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform provides SHA-256", e);
    }
  }

  /** Whether {@code s} is a SHA-256 in lowercase or uppercase hex. */
  public static boolean isSha256Hex(String s) {
    return s.length() == 64 && s.chars().allMatch(c -> (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')
        || (c >= 'A' && c <= 'F'));
  }

  /** The hash of the key the request presents in {@code header}: empty when none or not one valid key. */
  public static Optional<String> presented(RequestView request, String header) {
    return presented(request.headers(header));
  }

  /**
   * The hash of the key in a header's field lines: empty unless there is exactly one, and it is 1
   * to {@value #MAX_KEY_LENGTH} visible ASCII characters once stripped of surrounding spaces.
   */
  public static Optional<String> presented(List<String> values) {
    if (values.size() != 1) {
      return Optional.empty();
    }
    String v = values.get(0).strip();
    if (v.isEmpty() || v.length() > MAX_KEY_LENGTH || v.chars().anyMatch(c -> c <= 0x20 || c >= 0x7f)) {
      return Optional.empty();
    }
    return Optional.of(sha256(v));
  }
}
