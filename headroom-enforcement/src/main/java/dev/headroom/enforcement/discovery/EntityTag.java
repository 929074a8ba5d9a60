package dev.headroom.enforcement.discovery;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Base64;

/**
 * Strong entity tags made from content (RFC 9110 section 8.8.3), so that discovery documents can
 * be revalidated (Graceful Boundaries section 1, "freshness validators"), and the
 * {@code If-None-Match} check (RFC 9110 section 13.1.2). Stateless.
 */
public final class EntityTag {

  /** Longest If-None-Match value read; longer ones never match (the full response is sent). */
  public static final int MAX_IF_NONE_MATCH = 4096;

  private EntityTag() {}

  /**
   * The strong tag of the content: a quoted, unpadded base64url encoding of the first 16 bytes of
   * its SHA-256, such as {@code "q1w2..."}. Equal content always has the same tag.
   */
  public static String strong(byte[] content) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(content);
      return "\"" + Base64.getUrlEncoder().withoutPadding().encodeToString(Arrays.copyOf(digest, 16)) + "\"";
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every Java platform", e);
    }
  }

  /**
   * Whether an {@code If-None-Match} field value matches the tag, by the weak comparison section
   * 13.1.2 prescribes: {@code *} matches, {@code W/} prefixes are ignored. A null, oversized or
   * malformed value never matches.
   */
  public static boolean matchesIfNoneMatch(String ifNoneMatch, String etag) {
    if (ifNoneMatch == null || ifNoneMatch.length() > MAX_IF_NONE_MATCH) {
      return false;
    }
    String value = ifNoneMatch.strip();
    if (value.equals("*")) {
      return true;
    }
    String opaque = opaque(etag);
    for (String candidate : value.split(",", 256)) {
      String c = candidate.strip();
      if (c.startsWith("W/")) {
        c = c.substring(2);
      }
      if (c.equals(opaque)) {
        return true;
      }
    }
    return false;
  }

  private static String opaque(String etag) {
    return etag.startsWith("W/") ? etag.substring(2) : etag;
  }
}
