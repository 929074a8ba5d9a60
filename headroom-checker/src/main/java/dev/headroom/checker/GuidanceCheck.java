package dev.headroom.checker;

import dev.headroom.http.body.Refusal;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Checks constructive guidance (Graceful Boundaries section 3, SC-6, CONFORMANCE level 3):
 * machine-actionable URLs are relative or same-origin, and honest: every link a refusal hands out
 * that stays on the origin ({@code cachedResultUrl}, {@code alternativeEndpoint}, {@code upgradeUrl}
 * and {@code humanUrl}) is requested once and must not be a 404 or 410. {@code upgradeUrl} and
 * {@code humanUrl} are for people and may leave the origin (SC-6 covers machine-actionable URLs
 * only); such a link is not requested, only noted.
 */
final class GuidanceCheck {
  private final CheckRun run;

  GuidanceCheck(CheckRun run) {
    this.run = run;
  }

  final List<String> guidanceEvidence = new ArrayList<>();
  boolean guidanceFailed;
  boolean guidanceFound;

  void checkGuidance(Seen s, Refusal r) throws IOException, InterruptedException {
    checkGuidanceOrigins(s, r);
    List<String[]> present = new ArrayList<>();
    r.cachedResultUrl().ifPresent(u -> present.add(new String[] {"cachedResultUrl", u}));
    r.alternativeEndpoint().ifPresent(u -> present.add(new String[] {"alternativeEndpoint", u}));
    r.upgradeUrl().ifPresent(u -> present.add(new String[] {"upgradeUrl", u}));
    if (present.isEmpty()) {
      guidanceFailed = true;
      guidanceEvidence.add(s.where() + ": no cachedResultUrl, alternativeEndpoint or upgradeUrl");
      return;
    }
    guidanceFound = true;
    r.humanUrl().ifPresent(u -> present.add(new String[] {"humanUrl", u}));
    for (String[] g : present) {
      guidanceEvidence.add(s.where() + ": " + g[0] + " " + g[1]);
      boolean forPeople = g[0].equals("upgradeUrl") || g[0].equals("humanUrl");
      if (!Checker.sameOriginReference(g[1], s.uri())) {
        if (forPeople) {
          run.findings.add(new Finding(Finding.Severity.NOTE, "GB-3", "Graceful Boundaries section 3", s.where(),
              g[0] + " '" + g[1] + "' is on another origin; not requested"));
        } else {
          guidanceFailed = true;
        }
        continue;
      }
      Seen followed = run.get(s.uri().resolve(g[1].strip()), false);
      if (followed == null || followed.status() == 404 || followed.status() == 410) {
        guidanceFailed = true;
        run.findings.add(new Finding(Finding.Severity.VIOLATION, "GB-3", "CONFORMANCE Level 3 (\"Guidance MUST be honest\")",
            s.where(), g[0] + " '" + g[1] + "' leads to " + (followed == null ? "no response" : followed.status())));
        guidanceEvidence.add("  followed: " + (followed == null ? "no response" : followed.where()) + " (a dead end)");
      } else {
        guidanceEvidence.add("  followed: " + followed.where());
      }
    }
  }

  /** SC-6: machine-actionable guidance never leaves the origin. */
  void checkGuidanceOrigins(Seen s, Refusal r) {
    List<String[]> actionable = new ArrayList<>();
    r.cachedResultUrl().ifPresent(u -> actionable.add(new String[] {"cachedResultUrl", u}));
    r.alternativeEndpoint().ifPresent(u -> actionable.add(new String[] {"alternativeEndpoint", u}));
    r.scanUrl().ifPresent(u -> actionable.add(new String[] {"scanUrl", u}));
    for (String[] g : actionable) {
      if (!Checker.sameOriginReference(g[1], s.uri())) {
        if (s.refusal()) {
          run.refusals.refusalFailed = true;
        }
        run.findings.add(new Finding(Finding.Severity.VIOLATION, "SC-6", "Graceful Boundaries SC-6", s.where(),
            g[0] + " '" + g[1] + "' is cross-origin; machine-actionable guidance must be relative or same-origin"));
      }
    }
  }
}
