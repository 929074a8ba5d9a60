package dev.headroom.enforcement;

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
 * never fit (413) are built each time.
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

  private final ConcurrentHashMap<String, Kept> byPolicy = new ConcurrentHashMap<>();

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
