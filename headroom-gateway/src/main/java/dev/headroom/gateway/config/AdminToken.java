package dev.headroom.gateway.config;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The token that guards an admin listener bound beyond loopback, kept as its SHA-256 digest: the
 * configuration, its string form and every comparison hold the digest, never the token.
 *
 * @param sha256 the token's SHA-256 digest, in lower-case hex
 */
public record AdminToken(String sha256) {

  /** The digest of {@code token}, read from where {@code admin.tokenEnv} or {@code admin.tokenFile} point. */
  public static AdminToken of(String token) {
    return new AdminToken(HexFormat.of().formatHex(digest(token)));
  }

  /**
   * Whether {@code presented} is the token. The digests are compared in time independent of where
   * they differ ({@link MessageDigest#isEqual}), so timing tells a caller nothing of the token.
   */
  public boolean matches(String presented) {
    return presented != null && MessageDigest.isEqual(digest(presented), HexFormat.of().parseHex(sha256));
  }

  private static byte[] digest(String s) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform has SHA-256", e);
    }
  }
}
