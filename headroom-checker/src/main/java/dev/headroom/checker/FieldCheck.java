package dev.headroom.checker;

import dev.headroom.http.headers.Diagnostic;
import dev.headroom.http.headers.HeaderDialect;
import dev.headroom.http.headers.QuotaPolicyItem;
import dev.headroom.http.headers.RateLimitFields;
import dev.headroom.http.headers.ServiceLimitItem;
import dev.headroom.http.headers.VendorDialect;

/**
 * Checks the RateLimit fields of every response (draft-ietf-httpapi-ratelimit-headers-09 sections
 * 3, 4, 6 and RFC 9651): each {@link RateLimitFields} diagnostic becomes a finding, and fields on a
 * redirection are a warning (section 6). Records the dialects seen, for the {@link Report}.
 *
 * <p>Each response is judged by its own draft. Draft-09 and draft-10/-11 write the same fields and
 * differ in what {@code t} means (until the quota resets; until more quota is available) and so in
 * how it stands to Retry-After (section 6 of each: the same moment; Retry-After not earlier than
 * {@code t}). A {@code t} earlier than Retry-After is draft-10's, not a draft-09 violation; a
 * {@code t} later than Retry-After breaks both; {@code a} and {@code w} are the editor's draft after
 * -11. Where Retry-After and {@code t} meet, a note says which draft the response was judged by.
 */
final class FieldCheck {
  private final CheckRun run;

  FieldCheck(CheckRun run) {
    this.run = run;
  }

  void checkFields(Seen s) {
    run.dialects.addAll(s.fields().dialects());
    run.vendors.addAll(s.fields().vendors());
    for (ServiceLimitItem l : s.fields().limits()) {
      String dialect = l.vendor().map(VendorDialect::token).orElse(l.dialect().token());
      run.readings.put(dialect + " " + l.name().orElse(""), reading(s.fields(), l, dialect));
    }
    for (Diagnostic d : s.fields().diagnostics()) {
      Finding.Severity sev = switch (d.severity()) {
        case ERROR -> Finding.Severity.VIOLATION;
        case WARNING -> Finding.Severity.WARNING;
        case NOTE -> Finding.Severity.NOTE;
      };
      String message = d.field() + ": " + d.detail();
      if (d.kind() == Diagnostic.Kind.RESET_DISAGREES_WITH_RETRY_AFTER && notExhausted(s.fields(), d.detail())) {
        // Retry-After is the wait of the exhausted policy; a policy with quota left keeps its own reset.
        sev = Finding.Severity.NOTE;
        message += " (this policy has quota left; its reset need not match)";
      }
      if (d.kind() == Diagnostic.Kind.RESET_BEFORE_RETRY_AFTER) {
        message += " (t is the time until more quota is available, which Retry-After may follow: "
            + "judged by draft-10 and -11, not draft-09)";
      }
      run.findings.add(new Finding(sev, "IETF-" + d.kind().name(), d.reference(), s.where(), message));
    }
    checkValues(s);
    judgedBy(s);
    if (s.status() >= 300 && s.status() < 400 && !s.fields().limits().isEmpty()) {
      run.findings.add(new Finding(Finding.Severity.WARNING, "IETF-REDIRECT", "draft-09 section 6", s.where(),
          "RateLimit fields on a redirection: a low remaining value may keep clients from following it"));
    }
  }

  /**
   * What a client reads of one budget: {@code openai "tokens": 149984 of 150000 tokens left, back
   * in 360 s}.
   */
  static String reading(RateLimitFields f, ServiceLimitItem l, String dialect) {
    QuotaPolicyItem p = f.policyOf(l).orElse(null);
    StringBuilder sb = new StringBuilder(dialect);
    l.name().ifPresent(n -> sb.append(" \"").append(n).append('"'));
    sb.append(": ");
    sb.append(l.remaining().isPresent() ? Long.toString(l.remaining().getAsLong()) : "?");
    long quota = p != null ? p.quota() : l.limit().orElse(-1);
    if (quota >= 0) {
      sb.append(" of ").append(quota);
    }
    sb.append(' ').append(p != null ? p.unit() : "requests").append(" left");
    l.reset().ifPresent(t -> sb.append(", back in ").append(t.getSeconds()).append(" s"));
    if (p != null) {
      p.window().ifPresent(w -> sb.append(", window ").append(w.getSeconds()).append(" s"));
    }
    return sb.toString();
  }

  /** Says which draft a response carrying both Retry-After and a -08+ {@code t} was judged by. */
  private void judgedBy(Seen s) {
    RateLimitFields f = s.fields();
    if (f.retryAfter().isEmpty()) {
      return;
    }
    boolean next = false;
    boolean ietf = false;
    for (ServiceLimitItem l : f.limits()) {
      if (l.reset().isPresent() && l.dialect().namesPolicies()) {
        next |= l.dialect() == HeaderDialect.IETF_NEXT;
        ietf |= l.dialect() == HeaderDialect.IETF;
      }
    }
    if (!next && !ietf) {
      return;
    }
    boolean earlier = f.diagnostics().stream().anyMatch(d -> d.kind() == Diagnostic.Kind.RESET_BEFORE_RETRY_AFTER);
    String draft = next ? "the editor's draft after draft-11 (a, w: Retry-After not earlier than w)"
        : earlier ? "draft-10 and -11 (t until more quota is available; Retry-After not earlier than t)"
        : "draft-09 to -11 alike (t and Retry-After reference the same moment, as draft-09 asks and draft-10 allows)";
    run.findings.add(new Finding(Finding.Severity.NOTE, "IETF-DRAFT", "draft-09 section 6; draft-10 and -11 section 6",
        s.where(), "judged by " + draft));
  }

  /** A reset no client should believe: over {@value #YEAR_SECONDS} seconds. */
  static final long YEAR_SECONDS = 365L * 24 * 3600;

  /**
   * Values well-formed but absurd: a reset ({@code t}, draft-09 section 4.1.2) over a year, or
   * beyond the window ({@code w}, section 3.1.3) of the policy of the same name: the quota comes
   * back within one window, so a longer wait makes a client hold off for no reason.
   */
  private void checkValues(Seen s) {
    for (ServiceLimitItem l : s.fields().limits()) {
      if (l.reset().isEmpty()) {
        continue;
      }
      long t = l.reset().get().getSeconds();
      String name = l.name().map(n -> "'" + n + "'").orElse("the limit");
      if (t > YEAR_SECONDS) {
        run.findings.add(new Finding(Finding.Severity.VIOLATION, "IETF-ABSURD", "draft-09 section 4.1.2", s.where(),
            name + " resets in " + t + " s, over a year: no client can plan with it"));
        continue;
      }
      for (QuotaPolicyItem p : s.fields().policies()) {
        if (p.name().isPresent() && p.name().equals(l.name()) && p.window().isPresent()
            && t > p.window().get().getSeconds()) {
          run.findings.add(new Finding(Finding.Severity.WARNING, "IETF-ABSURD", "draft-09 sections 3.1.3 and 4.1.2",
              s.where(), name + " resets in " + t + " s, beyond its policy's window of " + p.window().get().getSeconds()
                  + " s"));
        }
      }
    }
  }

  /** Whether the named limit a reset diagnostic quotes ('name' reset ...) reports remaining quota. */
  private boolean notExhausted(RateLimitFields f, String detail) {
    if (!detail.startsWith("'")) {
      return false;
    }
    int end = detail.indexOf('\'', 1);
    if (end < 0) {
      return false;
    }
    String name = detail.substring(1, end);
    for (ServiceLimitItem l : f.limits()) {
      if (l.name().filter(name::equals).isPresent() && l.remaining().isPresent() && l.remaining().getAsLong() > 0) {
        return true;
      }
    }
    return false;
  }
}
