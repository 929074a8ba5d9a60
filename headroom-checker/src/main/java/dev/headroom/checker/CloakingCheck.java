package dev.headroom.checker;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks for content cloaking (Graceful Boundaries SC-9): the same URL requested again as a
 * browser ({@link #BROWSER}) must not answer materially differently from what the checker, an
 * agent, was sent. Two measures: the status must be the same, and the containment SC-9 names,
 * the share of the browser's distinct words that also appear in the agent's response, must be at
 * least {@link #MIN_CONTAINMENT} (SC-9: "Containment above 60% indicates legitimate conversion").
 * Containment is asymmetric on purpose: an agent's copy may be shorter (markup stripped), but
 * must not say other things. Both are warnings: SC-9 is a SHOULD NOT.
 *
 * <p>Not thread-safe; one per check.
 */
final class CloakingCheck {
  /** The browser the second request claims to be. */
  static final String BROWSER = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";

  /** SC-9's threshold: below this share of the browser's words, the agent was told something else. */
  static final double MIN_CONTAINMENT = 0.6;

  private static final Pattern WORD = Pattern.compile("[\\p{L}\\p{N}]{2,}");

  private final CheckRun run;

  CloakingCheck(CheckRun run) {
    this.run = run;
  }

  /** Requests {@code asAgent}'s URL as a browser and compares. */
  void compare(Seen asAgent) throws IOException, InterruptedException {
    Seen asBrowser = run.get(asAgent.uri(), false, BROWSER);
    String where = "GET " + asAgent.uri().getRawPath();
    if (asBrowser == null) {
      run.findings.add(new Finding(Finding.Severity.WARNING, "SC-9", "Graceful Boundaries SC-9", where,
          "no response when requested as a browser, " + asAgent.status() + " when requested by an agent"));
      return;
    }
    if (asBrowser.status() != asAgent.status()) {
      run.findings.add(new Finding(Finding.Severity.WARNING, "SC-9", "Graceful Boundaries SC-9", where,
          "answers " + asBrowser.status() + " to a browser but " + asAgent.status() + " to an agent (User-Agent "
              + CheckRun.USER_AGENT + ")"));
      return;
    }
    double c = containment(words(asBrowser.body()), words(asAgent.body()));
    if (c < MIN_CONTAINMENT) {
      run.findings.add(new Finding(Finding.Severity.WARNING, "SC-9", "Graceful Boundaries SC-9", where,
          String.format(Locale.ROOT, "only %.0f%% of what a browser is sent appears in what an agent is sent "
              + "(below %.0f%%): the content differs by User-Agent", c * 100, MIN_CONTAINMENT * 100)));
    }
  }

  /** The share of {@code reference}'s words found in {@code other}; 1 when the reference has none. */
  static double containment(Set<String> reference, Set<String> other) {
    if (reference.isEmpty()) {
      return 1;
    }
    int found = 0;
    for (String w : reference) {
      if (other.contains(w)) {
        found++;
      }
    }
    return (double) found / reference.size();
  }

  /** The distinct words (two letters or digits or more), lower case. */
  static Set<String> words(byte[] body) {
    Set<String> out = new HashSet<>();
    Matcher m = WORD.matcher(new String(body, StandardCharsets.UTF_8));
    while (m.find()) {
      out.add(m.group().toLowerCase(Locale.ROOT));
    }
    return out;
  }
}
