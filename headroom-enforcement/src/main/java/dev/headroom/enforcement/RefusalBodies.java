package dev.headroom.enforcement;

import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaPolicy;
import dev.headroom.http.body.ProblemType;
import dev.headroom.http.body.RefusalFormat;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The last refusal body a route sent for each refusing policy, so that a refusal storm builds and
 * serialises one body per second instead of one per request (the standalone gateway refuses at
 * the rate nginx serves, and the body was most of a refusal's cost). A quota-exceeded or
 * reduced-capacity body depends only on the refusing policy as enforced, the policies refused, the
 * problem type, the wait, the second it is sent in (its {@code windowResetAt}), the format and,
 * for HTML, the target it links to; never on who is refused. Escalations and requests that can
 * never fit (413) are built each time. On a route of one policy whose fields carry numbers only,
 * the whole answer (fields and body) is kept too ({@link Whole}): a front end that keeps what it
 * made of an answer (the gateway's serialised response) then does that once for everyone refused
 * with the same numbers in the same second.
 *
 * <p>At most {@link #MAX_POLICIES} entries, one per policy; a body's bytes are shared and never
 * written to. Thread-safe: racing refusals may build equal bodies, one of which is kept.
 */
final class RefusalBodies {
  /** The most policies whose last body is kept, per route. */
  static final int MAX_POLICIES = 1024;

  /** What a body depends on. */
  private record Key(QuotaPolicy policy, List<String> violated, ProblemType type, long waitSeconds, long second,
      RefusalFormat format, String htmlTarget) {}

  private record Kept(Key key, byte[] body) {}

  /**
   * What a whole refusal depends on, on a route of one policy whose fields carry numbers only
   * ({@link dev.headroom.http.headers.RateLimitHeaders#numbersOnly()}): the numbers the fields are
   * written from (remaining, reset, time until more quota and cost of the policy, the decision's
   * Retry-After, each in whole seconds as written), the problem type, the second, the format and,
   * for HTML, the target.
   */
  record Whole(QuotaPolicy policy, long remaining, long resetSeconds, long nextQuotaSeconds, long cost,
      long retryAfterSeconds, ProblemType type, long second, RefusalFormat format, String htmlTarget) {}

  private record KeptAnswer(Whole key, GateResponse answer) {}

  private final ConcurrentHashMap<String, Kept> byPolicy = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, KeptAnswer> answers = new ConcurrentHashMap<>();

  /** The key of a whole refusal of one policy's {@code outcome}. */
  static Whole whole(PolicyOutcome outcome, long retryAfterSeconds, ProblemType type, long second,
      RefusalFormat format, String htmlTarget) {
    return new Whole(outcome.policy(), outcome.remaining(), outcome.resetSeconds(), outcome.nextQuotaSeconds(),
        outcome.cost(), retryAfterSeconds, type, second, format, htmlTarget);
  }

  /** The whole refusal kept for these numbers, or null. */
  GateResponse answer(Whole key) {
    KeptAnswer kept = answers.get(key.policy().name());
    return kept != null && kept.key().equals(key) ? kept.answer() : null;
  }

  /** Keeps {@code answer} as the whole refusal for these numbers, while there is room. */
  void keep(Whole key, GateResponse answer) {
    String name = key.policy().name();
    if (answers.size() < MAX_POLICIES || answers.containsKey(name)) {
      answers.put(name, new KeptAnswer(key, answer));
    }
  }

  /** The body for these inputs: the one kept when they are the same, else {@code make}'s, kept. */
  byte[] body(QuotaPolicy policy, List<String> violated, ProblemType type, long waitSeconds, long second,
      RefusalFormat format, String htmlTarget, Supplier<byte[]> make) {
    Key key = new Key(policy, violated, type, waitSeconds, second, format, htmlTarget);
    Kept kept = byPolicy.get(policy.name());
    if (kept != null && kept.key().equals(key)) {
      return kept.body();
    }
    byte[] body = make.get();
    if (byPolicy.size() < MAX_POLICIES || byPolicy.containsKey(policy.name())) {
      byPolicy.put(policy.name(), new Kept(key, body));
    }
    return body;
  }
}
