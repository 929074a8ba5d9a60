package dev.headroom.checker;

import com.fasterxml.jackson.databind.JsonNode;
import dev.headroom.http.HeaderNames;
import dev.headroom.http.RetryAfter;
import dev.headroom.http.body.Refusal;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Provokes one refusal ({@link Checker.Builder#probe(int)}) and checks it (Graceful Boundaries
 * section 2): Retry-After present and valid, a JSON body valid against the refusal schema,
 * {@code retryAfterSeconds} agreeing with Retry-After, {@code detail} naming the wait, {@code why}
 * not restating the error; then hands the refusal to {@link GuidanceCheck}.
 */
final class RefusalCheck {
  private final CheckRun run;

  RefusalCheck(CheckRun run) {
    this.run = run;
  }

  private static final Set<String> RESTATEMENTS = Set.of("ratelimitexceeded", "ratelimited", "toomanyrequests",
      "limitexceeded", "quotaexceeded", "requestlimitexceeded");

  Seen refusal;
  final List<String> refusalEvidence = new ArrayList<>();
  boolean refusalFailed;

  void probe(List<URI> endpoints) throws IOException, InterruptedException {
    URI uri = run.probePath != null ? run.target.resolve(run.probePath) : endpoints.isEmpty() ? run.target : endpoints.get(0);
    int sent = 0;
    while (sent < run.probe) {
      sent++;
      Seen s = run.get(uri, false);
      if (s == null) {
        break;
      }
      if (s.success()) {
        run.limitedSuccesses.add(s);
      }
      if (s.refusal()) {
        refusal = s;
        break;
      }
    }
    if (refusal == null) {
      run.findings.add(new Finding(Finding.Severity.NOTE, "GB-2", "Graceful Boundaries section 2", "GET " + uri.getRawPath(),
          "no refusal within " + sent + " request(s) (--probe " + run.probe + "); refusal requirements unverified"));
      return;
    }
    refusalEvidence.add("refused after " + sent + " of at most " + run.probe + " request(s): " + refusal.where());
    checkRefusal(refusal);
    if (run.limitedSuccesses.isEmpty()) {
      askAgainAfterRetryAfter(uri);
    }
  }

  /**
   * When every answer so far was a refusal (the checker's address had used its quota before the
   * check began), no success response has shown its RateLimit fields yet: as a polite client does,
   * wait what the refusal's Retry-After asks, if that is no longer than the per-request timeout, and
   * ask once more (draft-ietf-httpapi-ratelimit-headers-09 section 7: a client honours Retry-After).
   */
  private void askAgainAfterRetryAfter(URI uri) throws IOException, InterruptedException {
    Optional<RetryAfter> ra = refusal.headers().firstValue(HeaderNames.RETRY_AFTER)
        .flatMap(v -> RetryAfter.parse(v, run.ticker.instant()));
    if (ra.isEmpty()) {
      return;
    }
    Duration wait = ra.get().delay();
    if (wait.isNegative() || wait.compareTo(run.timeout) > 0) {
      run.findings.add(new Finding(Finding.Severity.NOTE, "GB-2", "draft-09 section 7", "GET " + uri.getRawPath(),
          "every answer was a refusal and Retry-After (" + wait.toSeconds() + " s) is longer than the timeout; "
              + "no success response to read RateLimit fields from"));
      return;
    }
    Thread.sleep(wait.toMillis() + 100);
    Seen again = run.get(uri, false);
    if (again != null && again.success()) {
      run.limitedSuccesses.add(again);
      refusalEvidence.add("asked again after Retry-After (" + wait.toSeconds() + " s): " + again.where());
    }
  }

  void checkRefusal(Seen s) throws IOException, InterruptedException {
    Optional<String> raHeader = s.headers().firstValue(HeaderNames.RETRY_AFTER);
    Optional<RetryAfter> ra = raHeader.flatMap(v -> RetryAfter.parse(v, run.ticker.instant()));
    if (raHeader.isEmpty()) {
      refusalFailed = true;
      run.findings.add(new Finding(Finding.Severity.VIOLATION, "GB-2", "Graceful Boundaries section 2 (\"Return status 429 ... with a Retry-After header\"); RFC 6585 section 4",
          s.where(), "no Retry-After"));
    } else if (ra.isEmpty()) {
      refusalFailed = true;
      run.findings.add(new Finding(Finding.Severity.VIOLATION, "GB-2", "RFC 9110 section 10.2.3", s.where(),
          "Retry-After '" + raHeader.get() + "' is neither delay-seconds nor an HTTP-date"));
    } else {
      refusalEvidence.add("Retry-After: " + raHeader.get());
    }
    Optional<Refusal> body = run.bodyCheck.readRefusal(s, "GB-2");
    if (body.isEmpty()) {
      refusalFailed = true;
      refusalEvidence.add("body is not a JSON refusal");
      run.guidance.guidanceEvidence.add("no JSON refusal to carry guidance");
      run.guidance.guidanceFailed = true;
      return;
    }
    Refusal r = body.get();
    for (String issue : r.issues()) {
      if (BodyCheck.instructs(issue)) {
        run.findings.add(BodyCheck.instruction(s, issue));
        continue;
      }
      refusalFailed = true;
      run.findings.add(new Finding(Finding.Severity.VIOLATION, "GB-2", "Graceful Boundaries section 2", s.where(), issue));
    }
    try {
      JsonNode json = Checker.MAPPER.readTree(s.body());
      for (String v : Schemas.violations(s.status() == 429 ? Schemas.REFUSAL_429 : Schemas.REFUSAL, json)) {
        refusalFailed = true;
        run.findings.add(new Finding(Finding.Severity.VIOLATION, "SCHEMA", "Graceful Boundaries section 2; "
            + (s.status() == 429 ? "refusal-429.schema.json" : "refusal.schema.json"), s.where(), v));
      }
    } catch (IOException e) {
      refusalFailed = true;
    }
    if (r.issues().stream().allMatch(BodyCheck::instructs)) {
      refusalEvidence.add("error, detail, why, limit and retryAfterSeconds present");
    }
    OptionalLong ras = r.retryAfterSeconds();
    if (ras.isPresent() && ra.isPresent() && Math.abs(ras.getAsLong() - ra.get().delaySeconds()) > 1) {
      run.findings.add(new Finding(Finding.Severity.WARNING, "GB-2", "Graceful Boundaries appendix B.1 (\"Set the Retry-After HTTP header to match\")",
          s.where(), "retryAfterSeconds " + ras.getAsLong() + " but Retry-After " + ra.get().delaySeconds() + " s"));
    }
    r.detail().ifPresent(d -> {
      if (!d.matches("(?s).*\\d.*")) {
        run.findings.add(new Finding(Finding.Severity.WARNING, "GB-2", "Graceful Boundaries section 2 (\"detail MUST include the specific retry time\")",
            s.where(), "detail '" + Checker.shorten(d) + "' names no wait"));
      }
    });
    r.why().ifPresent(w -> {
      String norm = w.toLowerCase(Locale.ROOT).replaceAll("[^a-z]", "");
      String err = r.error().orElse("").toLowerCase(Locale.ROOT).replaceAll("[^a-z]", "");
      if (RESTATEMENTS.contains(norm) || (!err.isEmpty() && norm.equals(err))) {
        refusalFailed = true;
        run.findings.add(new Finding(Finding.Severity.VIOLATION, "GB-2", "Graceful Boundaries section 2 (\"why MUST explain the purpose of the limit, not just restate it\")",
            s.where(), "why '" + Checker.shorten(w) + "' restates the error"));
      }
    });
    r.problemType().ifPresent(t -> run.findings.add(new Finding(Finding.Severity.NOTE, "IETF-PROBLEM", "draft-09 section 5",
        s.where(), "problem type " + t.uri() + (r.violatedPolicies().isEmpty() ? "" : ", violated-policies " + r.violatedPolicies()))));
    run.guidance.checkGuidance(s, r);
  }
}
