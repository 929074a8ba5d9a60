package dev.headroom.checker;

import java.util.Objects;

/**
 * One thing the checker found, with the rule and the section of the specification it concerns.
 *
 * @param severity how much it matters
 * @param rule a short stable identifier: {@code GB-1} (section 1, discovery), {@code GB-2}
 *     (section 2, refusal), {@code GB-3} (guidance), {@code GB-4} (proactive headers),
 *     {@code GB-6} (response classes), {@code SC-6}, {@code SCHEMA}, {@code IETF-<kind>}, {@code HTTP}
 * @param reference the specification section, as a reader would look it up
 * @param where the request it was seen on ({@code GET /path -> 429}), or the document
 * @param message what exactly, naming the value
 */
public record Finding(Severity severity, String rule, String reference, String where, String message) {

  public Finding {
    Objects.requireNonNull(severity, "severity");
    Objects.requireNonNull(rule, "rule");
    Objects.requireNonNull(reference, "reference");
    Objects.requireNonNull(where, "where");
    Objects.requireNonNull(message, "message");
  }

  /** How much a finding matters. */
  public enum Severity {
    /** Breaks a MUST (or makes a field unusable): lowers the level where it concerns one. */
    VIOLATION,
    /** Against a SHOULD, or inconsistent. */
    WARNING,
    /** Worth knowing. */
    NOTE
  }

  @Override
  public String toString() {
    return severity + " " + rule + " [" + reference + "] " + where + ": " + message;
  }
}
