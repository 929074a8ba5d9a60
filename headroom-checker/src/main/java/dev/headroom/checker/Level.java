package dev.headroom.checker;

import java.util.Locale;

/** Graceful Boundaries conformance levels (CONFORMANCE.md; spec "Conformance Levels"), in order. */
public enum Level {
  /** No agentic interaction surface: nothing to conform to. */
  NOT_APPLICABLE("N/A"),
  /** Limits exist but are not described per the specification. */
  LEVEL_0("0"),
  /** Structured refusal: error, detail, why on every non-success; limit and retryAfterSeconds on 429. */
  LEVEL_1("1"),
  /** Level 1 and a discoverable, accurate limits document. */
  LEVEL_2("2"),
  /** Level 2 and constructive guidance in refusals. */
  LEVEL_3("3"),
  /** Level 3 and proactive RateLimit headers on success responses. */
  LEVEL_4("4");

  private final String label;

  Level(String label) {
    this.label = label;
  }

  /** {@code N/A}, {@code 0} ... {@code 4}. */
  public String label() {
    return label;
  }

  /** Whether this level is at least {@code other} (N/A is below 0). */
  public boolean atLeast(Level other) {
    return compareTo(other) >= 0;
  }

  /**
   * Reads {@code N/A}, {@code 0} to {@code 4}, {@code level-1} to {@code level-4} or {@code none}.
   *
   * @throws IllegalArgumentException naming the value and the accepted forms
   */
  public static Level parse(String s) {
    String v = s == null ? "" : s.trim().toLowerCase(Locale.ROOT);
    switch (v) {
      case "n/a": case "na": case "not-applicable": return NOT_APPLICABLE;
      case "0": case "none": case "level-0": return LEVEL_0;
      case "1": case "level-1": return LEVEL_1;
      case "2": case "level-2": return LEVEL_2;
      case "3": case "level-3": return LEVEL_3;
      case "4": case "level-4": return LEVEL_4;
      default:
        throw new IllegalArgumentException("level: expected N/A, 0, 1, 2, 3 or 4 (or level-1 ... level-4), got '" + s + "'");
    }
  }

  @Override
  public String toString() {
    return label;
  }
}
