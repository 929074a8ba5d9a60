package dev.headroom.checker;

import dev.headroom.http.headers.Diagnostic;
import dev.headroom.http.headers.RateLimitFields;
import dev.headroom.http.headers.ServiceLimitItem;

/**
 * Checks the RateLimit fields of every response (draft-ietf-httpapi-ratelimit-headers-09 sections
 * 3, 4, 6 and RFC 9651): each {@link RateLimitFields} diagnostic becomes a finding, and fields on a
 * redirection are a warning (section 6). Records the dialects seen, for the {@link Report}.
 */
final class FieldCheck {
  private final CheckRun run;

  FieldCheck(CheckRun run) {
    this.run = run;
  }

  void checkFields(Seen s) {
    run.dialects.addAll(s.fields().dialects());
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
      run.findings.add(new Finding(sev, "IETF-" + d.kind().name(), d.reference(), s.where(), message));
    }
    if (s.status() >= 300 && s.status() < 400 && !s.fields().limits().isEmpty()) {
      run.findings.add(new Finding(Finding.Severity.WARNING, "IETF-REDIRECT", "draft-09 section 6", s.where(),
          "RateLimit fields on a redirection: a low remaining value may keep clients from following it"));
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
