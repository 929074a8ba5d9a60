package dev.headroom.client;

import dev.headroom.http.HeaderNames;
import dev.headroom.http.RetryAfter;
import java.net.http.HttpResponse;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Where one origin's clock stands against the client's, learnt from its {@code Date} fields, to read
 * an instant it states ({@code X-RateLimit-Reset} in epoch seconds, a {@code Retry-After}
 * HTTP-date) on the client's clock.
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
 * <p>Most servers round the reset up to the second; some truncate it, and then {@code R} is in
 * {@code [E, E + 1 s)}: waiting for {@code E} is early and the request is refused. Rounded up,
 * {@code E} is after the instant its request was decided, which {@code Date} puts at or after
 * {@code D}, so {@code E > D}, and a request sent when the server's clock was already at {@code E}
 * or later counts in the next window and is told a later reset. An answer saying {@code E <= D} to
 * a request admitted when the server's clock was at {@code E} or later by the least offset known (a
 * refusal sent at the reset the client read, or a request decided in the last fraction of a second
 * before it) therefore proves the server truncates, and from then on every reset of the origin is
 * read one second later ({@code E <= D} alone does not: a server may stamp {@code Date} after the
 * reset it decided just before). Until such an
 * answer the client reads the reset as rounded up: reading every reset as possibly truncated would
 * make it wait up to two seconds against the servers that round up, as most do. Worked numbers: a
 * window resetting at 12.70 s (server) says {@code E = 12}; the client waits for 12 s and its request
 * is refused with {@code Date} 12 s and {@code E = 12}: from then on {@code E = 17} is read as
 * {@code [17, 18)}, and the next window goes at 18 s, late but not refused.
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

  /** Whether an answer proved that the server truncates its epoch resets to the second (see the class comment). */
  private boolean truncates;

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

  /**
   * Notes an answer dated {@code dateNanos} that states the reset {@code epochNanos} (both whole
   * seconds) to a request admitted at {@code admittedAt}: a reset at or before the second it was
   * stated in, for a request sent when the server's clock had passed it, was truncated. True when this answer
   * is the first to show it: what was read from the earlier ones is a second early.
   */
  boolean observeReset(long epochNanos, long dateNanos, long admittedAt) {
    if (!truncates && known() && epochNanos != Long.MIN_VALUE && dateNanos != Long.MIN_VALUE && epochNanos <= dateNanos
        && Ceilings.saturatingAdd(admittedAt, low) >= epochNanos) {
      truncates = true;
      return true;
    }
    return false;
  }

  /** Whether the server is known to truncate its epoch resets (then they name the second before the reset). */
  boolean truncates() {
    return truncates;
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

  /**
   * The latest the instant that {@code epochNanos} (a whole second, rounded up, or truncated when the
   * server is known to truncate) names can be, on the client's clock.
   */
  long latest(long epochNanos) {
    return Ceilings.saturatingAdd(Ceilings.saturatingAdd(epochNanos, truncates ? SECOND : 0), -low);
  }

  /** An instant before the one that {@code epochNanos} names, on the client's clock. */
  long earliest(long epochNanos) {
    return Ceilings.saturatingAdd(Ceilings.saturatingAdd(epochNanos, truncates ? 0 : -SECOND), -high);
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
    return epochNanos(RetryAfter.parseHttpDate(dates.get(0).strip(), Instant.EPOCH));
  }

  /**
   * A whole-second instant the server stated (its {@code Date}, a Retry-After HTTP-date) in
   * nanoseconds since the epoch, or {@code Long.MIN_VALUE} when absent or out of the range these
   * nanoseconds can hold with room for arithmetic (before 1970, or past the year 2116).
   */
  static long epochNanos(Optional<Instant> instant) {
    return instant.filter(i -> i.getEpochSecond() >= 0 && i.getEpochSecond() < Long.MAX_VALUE / SECOND / 2)
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
    return String.format(Locale.ROOT, "server clock - client clock in [%.3f, %.3f) s%s", low / 1e9, high / 1e9,
        truncates ? ", resets truncated" : "");
  }
}
