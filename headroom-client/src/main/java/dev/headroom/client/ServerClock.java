package dev.headroom.client;

import dev.headroom.http.HeaderNames;
import dev.headroom.http.RetryAfter;
import java.net.http.HttpResponse;
import java.time.Instant;
import java.util.List;
import java.util.Locale;

/**
 * Where one origin's clock stands against the client's, learnt from its {@code Date} fields, to read
 * a reset it states as an instant ({@code X-RateLimit-Reset} in epoch seconds) on the client's clock.
 *
 * <h2>How is this designed, and why?</h2>
 *
 * <p>{@code Date} is the server's clock truncated to the second (RFC 9110 section 6.6.1), taken
 * while it handled the request: between the request's admission {@code a} and its answer's receipt
 * {@code b} on the client's clock. With {@code delta} the server's clock less the client's, each
 * answer says {@code D <= s + delta < D + 1 s} for some {@code s} in {@code [a, b]}, so
 * {@code delta} is in {@code [D - b, D + 1 s - a)}. Each answer alone leaves a second and its
 * latency; answers whose requests were handled on either side of one of the server's second
 * boundaries cut that down to about the latency, and the intersection of all of them is what the
 * client knows. An epoch reset {@code E} rounded up to the second names an instant {@code R} in
 * {@code (E - 1 s, E]} on the server's clock, so on the client's {@code R} is in
 * {@code (E - 1 s - high, E - low]}: one second wide and the offset's uncertainty, instead of the
 * two seconds and the latency that reading {@code E - D} as a relative {@code t} from the receipt
 * leaves (draft-ietf-httpapi-ratelimit-headers-09 section 7: a client "MAY ... use other
 * information (e.g. the "Date" response header field ...) to better estimate the reset parameter
 * moment intended by the server").
 *
 * <p>Worked numbers: a request admitted at 10.40 s and answered at 10.45 s (client) says
 * {@code Date} 20 s: {@code delta} in [9.55, 10.60). One admitted at 10.70 s, answered at 10.72 s,
 * says 21 s: [10.28, 11.30); together [10.28, 10.60). {@code E = 25} then puts the reset in
 * (13.40, 14.72] on the client's clock, where {@code t = E - D = 4} from the receipt at 10.72 s
 * said (12.70, 14.72] (admitted at 10.70 s, two seconds of slack).
 *
 * <p>A server whose clock jumps, or several behind one origin that disagree, make the answers
 * contradict each other: the client then starts again from the latest answer. Not thread-safe: the
 * tracker's lock guards it.
 */
final class ServerClock {

  static final long SECOND = 1_000_000_000L;

  /** The server's clock less the client's is at least this... */
  private long low = Long.MIN_VALUE;
  /** ... and below this (nanoseconds). */
  private long high = Long.MAX_VALUE;

  /** An answer dated {@code dateNanos} (whole seconds) to a request admitted at {@code admittedAt}, received at {@code receivedAt}. */
  void observe(long dateNanos, long admittedAt, long receivedAt) {
    long lo = Ceilings.saturatingAdd(dateNanos, -receivedAt);
    long hi = Ceilings.saturatingAdd(Ceilings.saturatingAdd(dateNanos, SECOND), -admittedAt);
    if (lo >= high || hi <= low) {
      low = lo;
      high = hi;
    } else {
      low = Math.max(low, lo);
      high = Math.min(high, hi);
    }
  }

  /** How wide what is known of the offset is (nanoseconds); {@code Long.MAX_VALUE} before any dated answer. */
  long width() {
    return known() ? Ceilings.saturatingAdd(high, -low) : Long.MAX_VALUE;
  }

  /**
   * An instant at or after {@code now} on the client's clock at which, for the offset in the middle
   * of what is known, the server's clock turns to a whole second: a request decided there is dated
   * that second exactly when the offset is in the upper half, so its answer halves what is known
   * (less its latency). {@code Long.MIN_VALUE} before any dated answer.
   */
  long bisection(long now) {
    if (!known() || high == Long.MAX_VALUE) {
      return Long.MIN_VALUE;
    }
    long mid = low + (high - low) / 2;
    long server = Ceilings.saturatingAdd(now, mid);
    long next = Math.floorDiv(server, SECOND) * SECOND;
    if (next < server) {
      next = Ceilings.saturatingAdd(next, SECOND);
    }
    return Ceilings.saturatingAdd(next, -mid);
  }

  /** Whether any answer was dated. */
  boolean known() {
    return low != Long.MIN_VALUE;
  }

  /** The latest the instant that {@code epochNanos} (a whole second, rounded up) names can be, on the client's clock. */
  long latest(long epochNanos) {
    return Ceilings.saturatingAdd(epochNanos, -low);
  }

  /** An instant before the one that {@code epochNanos} names, on the client's clock. */
  long earliest(long epochNanos) {
    return Ceilings.saturatingAdd(Ceilings.saturatingAdd(epochNanos, -SECOND), -high);
  }

  /**
   * The response's {@code Date} in nanoseconds since the epoch, or {@code Long.MIN_VALUE} without
   * one valid HTTP-date.
   */
  static long date(HttpResponse<?> response) {
    List<String> dates = response.headers().allValues("Date");
    if (dates.size() != 1) {
      return Long.MIN_VALUE;
    }
    return RetryAfter.parseHttpDate(dates.get(0).strip(), Instant.EPOCH)
        .filter(i -> i.getEpochSecond() >= 0 && i.getEpochSecond() < Long.MAX_VALUE / SECOND / 2)
        .map(i -> i.getEpochSecond() * SECOND).orElse(Long.MIN_VALUE);
  }

  /**
   * The response's {@code X-RateLimit-Reset} in nanoseconds since the epoch when it is one value in
   * epoch seconds (as the header parser reads it: from 1,000,000,000 up to but excluding
   * 100,000,000,000, beyond which it is milliseconds), else {@code Long.MIN_VALUE}.
   */
  static long epochReset(HttpResponse<?> response) {
    List<String> values = response.headers().allValues(HeaderNames.X_RATELIMIT_RESET);
    if (values.size() != 1) {
      return Long.MIN_VALUE;
    }
    String v = values.get(0).strip();
    if (v.length() < 10 || v.length() > 11 || !v.chars().allMatch(c -> c >= '0' && c <= '9')) {
      return Long.MIN_VALUE;
    }
    long seconds = Long.parseLong(v);
    return seconds < 1_000_000_000L ? Long.MIN_VALUE : seconds * SECOND;
  }

  @Override
  public String toString() {
    return String.format(Locale.ROOT, "server clock - client clock in [%.3f, %.3f) s", low / 1e9, high / 1e9);
  }
}
