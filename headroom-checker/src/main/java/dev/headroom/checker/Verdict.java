package dev.headroom.checker;

import dev.headroom.http.headers.Diagnostic;
import java.util.ArrayList;
import java.util.List;

/**
 * Computes the level from the evidence the checks gathered: one {@link Requirement} per level
 * (Level 1 bodies and refusals, Level 2 discovery, Level 3 guidance, Level 4 proactive fields),
 * each pass, fail or unverified; the level is the highest whose requirements and all below pass;
 * a declared {@code conformance} above it is a warning, one below it a note.
 */
final class Verdict {
  private final CheckRun run;

  Verdict(CheckRun run) {
    this.run = run;
  }

  Report report() {
    List<Requirement> reqs = new ArrayList<>();
    List<String> nonSuccess = new ArrayList<>(run.bodyCheck.nonSuccessEvidence);
    Requirement.Status ns = nonSuccess.isEmpty() ? Requirement.Status.UNVERIFIED
        : run.bodyCheck.nonSuccessFailed ? Requirement.Status.FAIL : Requirement.Status.PASS;
    if (nonSuccess.isEmpty()) {
      nonSuccess.add("no non-success response observed");
    }
    reqs.add(new Requirement(Level.LEVEL_1, "every non-success response carries error, detail and why (section 6)", ns, nonSuccess));
    Requirement.Status rs;
    List<String> refusalEv = new ArrayList<>(run.refusals.refusalEvidence);
    if (run.refusals.refusal == null) {
      rs = Requirement.Status.UNVERIFIED;
      refusalEv.add(run.probe > 0 ? "no refusal provoked within --probe " + run.probe : "no refusal observed; run with --probe N to provoke one");
    } else {
      rs = run.refusals.refusalFailed ? Requirement.Status.FAIL : Requirement.Status.PASS;
    }
    reqs.add(new Requirement(Level.LEVEL_1, "429 responses add limit and retryAfterSeconds, with Retry-After (section 2)", rs, refusalEv));
    Requirement.Status ds = run.discovery.document != null && !run.discovery.discoveryFailed ? Requirement.Status.PASS : Requirement.Status.FAIL;
    List<String> discEv = new ArrayList<>(run.discovery.discoveryEvidence);
    if (discEv.isEmpty()) {
      discEv.add("no discovery path answered");
    }
    reqs.add(new Requirement(Level.LEVEL_2, "a valid limits discovery document (section 1)", ds, discEv));
    Requirement.Status gs = run.refusals.refusal == null ? Requirement.Status.UNVERIFIED
        : run.guidance.guidanceFound && !run.guidance.guidanceFailed ? Requirement.Status.PASS : Requirement.Status.FAIL;
    List<String> guideEv = new ArrayList<>(run.guidance.guidanceEvidence);
    if (run.refusals.refusal == null) {
      guideEv.add("no refusal observed to carry guidance");
    }
    reqs.add(new Requirement(Level.LEVEL_3, "refusals carry honest, same-origin constructive guidance (section 3, SC-6)", gs, guideEv));
    List<String> proEv = new ArrayList<>();
    boolean proFailed = false;
    for (Seen s : run.limitedSuccesses) {
      boolean errors = s.fields().diagnostics().stream().anyMatch(d -> d.severity() == Diagnostic.Severity.ERROR);
      if (s.fields().limits().isEmpty()) {
        proFailed = true;
        proEv.add(s.where() + ": no RateLimit fields");
      } else if (errors) {
        proFailed = true;
        proEv.add(s.where() + ": malformed RateLimit fields");
      } else {
        proEv.add(s.where() + ": " + s.fields().dialects() + " " + s.fields().limits());
      }
    }
    Requirement.Status ps = run.limitedSuccesses.isEmpty() ? Requirement.Status.UNVERIFIED
        : proFailed ? Requirement.Status.FAIL : Requirement.Status.PASS;
    if (proEv.isEmpty()) {
      proEv.add("no success response from a limited endpoint observed");
    }
    reqs.add(new Requirement(Level.LEVEL_4, "success responses carry well-formed RateLimit fields (section 4)", ps, proEv));

    String declared = run.discovery.documentJson != null && run.discovery.documentJson.path("conformance").isTextual()
        ? run.discovery.documentJson.get("conformance").asText() : null;
    Level level;
    boolean anyLimits = !run.dialects.isEmpty() || !run.vendors.isEmpty() || run.refusals.refusal != null || run.seen.stream().anyMatch(Seen::refusal)
        || (run.discovery.document != null && !run.discovery.document.endpoints().isEmpty());
    if ("not-applicable".equals(declared) && !anyLimits) {
      level = Level.NOT_APPLICABLE;
    } else {
      level = Level.LEVEL_0;
      if (ns == Requirement.Status.PASS && rs != Requirement.Status.FAIL) {
        level = Level.LEVEL_1;
        if (ds == Requirement.Status.PASS) {
          level = Level.LEVEL_2;
          if (gs == Requirement.Status.PASS) {
            level = Level.LEVEL_3;
            if (ps == Requirement.Status.PASS) {
              level = Level.LEVEL_4;
            }
          }
        }
      }
    }
    if (declared != null) {
      try {
        Level d = Level.parse(declared);
        if (d.compareTo(level) > 0) {
          run.findings.add(new Finding(Finding.Severity.WARNING, "GB-CONFORMANCE", "Graceful Boundaries \"Self-Assertion and External Validation\"",
              "conformance", "declares " + declared + " but validates as level " + level.label()));
        } else if (d.compareTo(level) < 0) {
          // Understating is no breach, but agents plan by the declaration: they miss what the service offers.
          run.findings.add(new Finding(Finding.Severity.NOTE, "GB-CONFORMANCE", "Graceful Boundaries \"Self-Assertion and External Validation\"",
              "conformance", "declares " + declared + " but validates as level " + level.label()
                  + "; declaring the level it meets lets agents rely on it"));
        }
      } catch (IllegalArgumentException e) {
        // The schema check already reported a conformance value outside the enumeration.
      }
    }
    // the same finding seen on two answers (a probe's refusal and the one asked again after its
    // Retry-After, say) is reported once
    return new Report(run.target, level, declared, run.dialects, run.vendors, List.copyOf(run.readings.values()), reqs, run.findings.stream().distinct().toList(),
        run.requests);
  }
}
