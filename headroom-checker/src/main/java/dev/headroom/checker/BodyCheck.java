package dev.headroom.checker;

import dev.headroom.http.HeaderNames;
import dev.headroom.http.body.Refusal;
import dev.headroom.http.body.RefusalParseException;
import dev.headroom.http.body.RefusalReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks every non-success body (Graceful Boundaries section 6): a JSON refusal with {@code error},
 * {@code detail} and {@code why}; reads each body once as a {@link Refusal} for the other checks.
 * Holds the evidence of the Level 1 "every non-success response" requirement.
 */
final class BodyCheck {
  private final CheckRun run;

  BodyCheck(CheckRun run) {
    this.run = run;
  }

  private static final Pattern META_RETRY_AFTER = Pattern.compile(
      "<meta\\s+name=[\"']retry-after[\"']\\s+content=[\"'](\\d+)[\"']", Pattern.CASE_INSENSITIVE);

  final List<String> nonSuccessEvidence = new ArrayList<>();
  boolean nonSuccessFailed;

  void checkNonSuccessBody(Seen s) {
    Optional<Refusal> r = readRefusal(s, s.refusal() ? "GB-2" : "GB-6");
    if (r.isEmpty()) {
      nonSuccessFailed = true;
      nonSuccessEvidence.add(s.where() + ": body is not a structured refusal");
      return;
    }
    List<String> core = new ArrayList<>();
    for (String issue : r.get().issues()) {
      if ((issue.startsWith("error:") || issue.startsWith("detail:") || issue.startsWith("why:")) && !instructs(issue)) {
        core.add(issue);
      }
    }
    if (core.isEmpty()) {
      nonSuccessEvidence.add(s.where() + ": error, detail and why present");
    } else {
      nonSuccessFailed = true;
      nonSuccessEvidence.add(s.where() + ": " + String.join("; ", core));
    }
    if (!s.refusal()) {
      for (String issue : r.get().issues()) {
        run.findings.add(instructs(issue) ? instruction(s, issue)
            : new Finding(core.contains(issue) ? Finding.Severity.VIOLATION : Finding.Severity.WARNING, "GB-6",
                "Graceful Boundaries section 6", s.where(), issue));
      }
      run.guidance.checkGuidanceOrigins(s, r.get());
    }
  }

  /** Whether a read refusal's issue is text that instructs agents (headroom-http's reader reports these, SC-16). */
  static boolean instructs(String issue) {
    return issue.endsWith("(Graceful Boundaries SC-16)");
  }

  /**
   * SC-16 ("Services SHOULD keep guidance declarative"): a warning, not a violation, and it lowers
   * no level, since the rule is a SHOULD; an agent must treat the text as data either way.
   */
  static Finding instruction(Seen s, String issue) {
    return new Finding(Finding.Severity.WARNING, "SC-16", "Graceful Boundaries SC-16", s.where(), issue);
  }

  /** The body as a refusal, or empty (with a finding, once) when it is not JSON. */
  Optional<Refusal> readRefusal(Seen s, String rule) {
    return run.read.computeIfAbsent(s, x -> parseRefusal(x, rule));
  }

  private Optional<Refusal> parseRefusal(Seen s, String rule) {
    String type = s.contentType();
    if (type.startsWith("text/html")) {
      String html = new String(s.body(), StandardCharsets.UTF_8);
      Matcher m = META_RETRY_AFTER.matcher(html);
      if (s.refusal()) {
        if (m.find()) {
          run.findings.add(new Finding(Finding.Severity.NOTE, "GB-2", "Graceful Boundaries section 2 (HTML 429 responses)",
              s.where(), "HTML refusal with <meta name=\"retry-after\" content=\"" + m.group(1) + "\">"));
        } else if (s.headers().firstValue(HeaderNames.RETRY_AFTER).isEmpty()) {
          run.findings.add(new Finding(Finding.Severity.VIOLATION, "GB-2", "Graceful Boundaries section 2 (HTML 429 responses)",
              s.where(), "HTML refusal with neither Retry-After nor <meta name=\"retry-after\">: the wait is not machine-accessible"));
        }
      }
      run.findings.add(new Finding(Finding.Severity.VIOLATION, rule, "Graceful Boundaries section 2 (\"Content-Type MUST be application/json for API endpoints\")",
          s.where(), "body is text/html, not a JSON refusal with error, detail and why"));
      return Optional.empty();
    }
    if (s.body().length == 0) {
      run.findings.add(new Finding(Finding.Severity.VIOLATION, rule, "Graceful Boundaries section 6", s.where(),
          "empty body: every non-success response needs error, detail and why"));
      return Optional.empty();
    }
    try {
      Refusal r = RefusalReader.defaults().read(s.status(), s.body());
      if (!(type.startsWith("application/json") || type.startsWith("application/problem+json"))) {
        run.findings.add(new Finding(Finding.Severity.WARNING, rule, "Graceful Boundaries section 2; RFC 9457 section 3",
            s.where(), "JSON body sent as '" + (type.isEmpty() ? "no Content-Type" : type)
                + "', expected application/json or application/problem+json"));
      }
      return Optional.of(r);
    } catch (RefusalParseException e) {
      run.findings.add(new Finding(Finding.Severity.VIOLATION, rule, "Graceful Boundaries section 6", s.where(),
          "body is not a JSON object (" + e.getMessage() + ")"));
      return Optional.empty();
    }
  }
}
