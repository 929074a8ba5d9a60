package dev.headroom.enforcement.discovery;

import java.util.Arrays;

/** The Graceful Boundaries conformance values of the discovery {@code conformance} member (section 1). */
public enum ConformanceLevel {
  /** No agentic interaction surface: nothing to describe. */
  NOT_APPLICABLE("not-applicable"),
  /** Limits are enforced but not described per the specification. */
  NONE("none"),
  /** Structured refusals. */
  LEVEL_1("level-1"),
  /** Level 1 and a discovery document. */
  LEVEL_2("level-2"),
  /** Level 2 and constructive guidance in refusals. */
  LEVEL_3("level-3"),
  /** Level 3 and proactive RateLimit headers on success. */
  LEVEL_4("level-4");

  private final String token;

  ConformanceLevel(String token) {
    this.token = token;
  }

  /** The value sent. */
  public String token() {
    return token;
  }

  /**
   * The level with this token ({@code none}, {@code level-1} ... {@code level-4},
   * {@code not-applicable}).
   *
   * @throws IllegalArgumentException naming the value and the tokens accepted
   */
  public static ConformanceLevel fromToken(String token) {
    for (ConformanceLevel l : values()) {
      if (l.token.equals(token)) {
        return l;
      }
    }
    throw new IllegalArgumentException("conformance: '" + token + "' is not valid; expected one of "
        + Arrays.stream(values()).map(ConformanceLevel::token).toList());
  }
}
