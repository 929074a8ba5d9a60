package dev.headroom.http.headers;

import java.util.Objects;

/**
 * One finding of {@link RateLimitFields#parse}: a field or member that was malformed (and so
 * ignored, as draft-ietf-httpapi-ratelimit-headers-09 section 7 requires), well-formed but
 * inconsistent, or merely worth noting. A conformance checker reports these; a client can ignore
 * them, since the parse result already leaves out whatever was malformed.
 *
 * @param kind what was found; its {@link Kind#severity()} and {@link Kind#reference()} are fixed
 * @param field the field name as Headroom spells it (see {@link dev.headroom.http.HeaderNames})
 * @param detail what exactly, naming the value (truncated to {@value #MAX_DETAIL_CHARS} characters)
 */
public record Diagnostic(Kind kind, String field, String detail) {

  /** Longest detail kept: details quote hostile input, which must not grow without bound. */
  public static final int MAX_DETAIL_CHARS = 200;

  public Diagnostic {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(field, "field");
    Objects.requireNonNull(detail, "detail");
    if (detail.length() > MAX_DETAIL_CHARS) {
      detail = detail.substring(0, MAX_DETAIL_CHARS - 3) + "...";
    }
  }

  /** Shorthand for {@code kind().severity()}. */
  public Severity severity() {
    return kind.severity();
  }

  /** Shorthand for {@code kind().reference()}. */
  public String reference() {
    return kind.reference();
  }

  @Override
  public String toString() {
    return kind.severity() + " " + kind + " " + field + ": " + detail + " (" + kind.reference() + ")";
  }

  /** How much a finding matters. */
  public enum Severity {
    /** Malformed: the field or member was ignored. */
    ERROR,
    /** Well-formed but against a SHOULD, or inconsistent with another field; the value was kept. */
    WARNING,
    /** Allowed and kept, but worth knowing (comments, interpretations, mixed dialects). */
    NOTE
  }

  /** What was found, with its severity and the section of the specification it concerns. */
  public enum Kind {
    /** The field exceeds the parser's bounds (size, lines, members); ignored. */
    FIELD_TOO_LARGE(Severity.ERROR, "RFC 9651 section 4.2; draft-09 section 8.5.1"),
    /** The field is not valid Structured Fields (or not an integer, for the plain fields); ignored. */
    SYNTAX(Severity.ERROR, "RFC 9651 section 4.2; draft-09 section 7"),
    /** A list member is an Inner List where an Item is required; the member was ignored. */
    INNER_LIST(Severity.ERROR, "draft-09 sections 3 and 4"),
    /** A policy or limit identifier is neither a String nor a Token; the member was ignored. */
    BAD_NAME(Severity.ERROR, "draft-09 sections 3 and 4.1"),
    /** The identifier is a Token; the draft requires a String, but its own appendix B.3.1 sends Tokens. Kept. */
    NAME_IS_TOKEN(Severity.WARNING, "draft-09 section 3"),
    /** A quota policy lacks the REQUIRED {@code q}; the member was ignored. */
    MISSING_QUOTA(Severity.ERROR, "draft-09 section 3.1.1"),
    /** A defined parameter ({@code q}, {@code qu}, {@code w}, {@code pk}, {@code r}, {@code t}) has the wrong type or range; the member was ignored. */
    BAD_PARAMETER(Severity.ERROR, "draft-09 sections 3.1 and 4.1"),
    /** A service limit lacks the REQUIRED {@code r}; kept without a remaining value (draft-09 appendix B.3.1 does this). */
    MISSING_REMAINING(Severity.WARNING, "draft-09 section 4.1.1"),
    /** {@code qu} names a unit outside the registry; kept. */
    UNKNOWN_QUOTA_UNIT(Severity.WARNING, "draft-09 sections 3.1.2 and 10.3"),
    /**
     * A parameter the draft does not define: a comment (draft-09), or ignored as the editor's draft
     * after -11 requires; not an error.
     */
    UNKNOWN_PARAMETER(Severity.NOTE, "draft-09 sections 3.1 and 4.1"),
    /** Two quota policies share a name and partition key. */
    DUPLICATE_POLICY(Severity.WARNING, "draft-09 section 3.1"),
    /** A service limit names a policy that RateLimit-Policy does not advertise. */
    UNKNOWN_POLICY(Severity.NOTE, "draft-09 section 4.1"),
    /** The remaining units exceed the policy's quota. */
    REMAINING_ABOVE_QUOTA(Severity.WARNING, "draft-09 sections 3.1.1 and 4.1.1; draft-09 section 8.5.1"),
    /**
     * The reset disagrees with Retry-After in a way no draft allows: later than Retry-After (every
     * draft), or any difference before draft-08; Retry-After wins.
     */
    RESET_DISAGREES_WITH_RETRY_AFTER(Severity.WARNING, "draft-09 sections 6 and 7; draft-10 and -11 section 6"),
    /**
     * {@code t} is earlier than Retry-After: as draft-10 and -11 allow ({@code t} is the time until
     * more quota is available, and Retry-After "SHOULD NOT reference a point in time earlier than"
     * it), not as draft-09 asks (the same moment). Judged by draft-10 and -11.
     */
    RESET_BEFORE_RETRY_AFTER(Severity.NOTE, "draft-10 and -11 section 6; draft-09 section 6"),
    /** Retry-After is neither delay-seconds nor an HTTP-date; ignored. */
    BAD_RETRY_AFTER(Severity.ERROR, "RFC 9110 section 10.2.3"),
    /** A singleton field occurs more than once with different values; ignored. */
    REPEATED_FIELD(Severity.ERROR, "RFC 9110 section 5.3; draft-polli-ratelimit-headers-02 section 3"),
    /** X-RateLimit-Reset was read as an epoch timestamp (seconds or milliseconds), not as delta seconds. */
    EPOCH_RESET(Severity.NOTE, "draft-09 \"RateLimit header fields currently used on the web\""),
    /** More than one dialect was seen in one response. */
    MIXED_DIALECTS(Severity.NOTE, "draft-09 appendix A.1"),
    /** The parser itself failed on this input; a defect in Headroom, reported instead of thrown. */
    INTERNAL(Severity.ERROR, "Headroom");

    private final Severity severity;
    private final String reference;

    Kind(Severity severity, String reference) {
      this.severity = severity;
      this.reference = reference;
    }

    public Severity severity() {
      return severity;
    }

    /** The specification section concerned. */
    public String reference() {
      return reference;
    }
  }
}
