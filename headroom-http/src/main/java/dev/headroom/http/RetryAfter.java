package dev.headroom.http;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A {@code Retry-After} field value (RFC 9110 section 10.2.3): how long the client ought to wait,
 * sent either as delay-seconds or as an HTTP-date.
 *
 * <p>Parsing accepts all three HTTP-date forms a recipient must accept (RFC 9110 section 5.6.7):
 * IMF-fixdate, the obsolete RFC 850 form (two-digit years more than 50 years ahead are read as
 * the past century) and ANSI C asctime. A date is turned into a delay relative to the instant the
 * caller supplies (from its injected clock), never the wall clock; a date in the past is a zero
 * delay. delay-seconds beyond 2^31 saturate there, as RFC 9111 section 1.2.2 asks of delta-seconds.
 * Malformed values yield {@link Optional#empty()}, never an exception.
 *
 * <p>Immutable and thread-safe.
 */
public final class RetryAfter {

  /** Largest delay kept; larger delay-seconds saturate here (RFC 9111 section 1.2.2). */
  public static final long MAX_DELAY_SECONDS = 1L << 31;

  /** Longest field value examined: the longest valid HTTP-date is 30 characters. */
  static final int MAX_VALUE_CHARS = 64;

  private static final DateTimeFormatter IMF_FIXDATE =
      DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.ROOT).withZone(ZoneOffset.UTC);

  private static final String MONTH = "(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)";
  private static final String TIME = "([0-9]{2}):([0-9]{2}):([0-9]{2})";
  private static final Pattern FIXDATE = Pattern.compile(
      "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), ([0-9]{2}) " + MONTH + " ([0-9]{4}) " + TIME + " GMT");
  private static final Pattern RFC850 = Pattern.compile(
      "(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), ([0-9]{2})-" + MONTH + "-([0-9]{2}) " + TIME + " GMT");
  private static final Pattern ASCTIME = Pattern.compile(
      "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) " + MONTH + " ([0-9 ][0-9]) " + TIME + " ([0-9]{4})");
  private static final String MONTHS = "JanFebMarAprMayJunJulAugSepOctNovDec";

  private final Duration delay;
  private final Instant date;

  private RetryAfter(Duration delay, Instant date) {
    this.delay = delay;
    this.date = date;
  }

  /**
   * A delay sent as delay-seconds.
   *
   * @throws IllegalArgumentException when the delay is negative
   */
  public static RetryAfter ofDelay(Duration delay) {
    Objects.requireNonNull(delay, "delay");
    if (delay.isNegative()) {
      throw new IllegalArgumentException("delay: expected zero or more, got " + delay);
    }
    return new RetryAfter(delay, null);
  }

  /**
   * Parses a field value relative to {@code now}. Leading and trailing whitespace is ignored.
   *
   * @return the value, or empty when it is neither delay-seconds nor an HTTP-date
   */
  public static Optional<RetryAfter> parse(String value, Instant now) {
    Objects.requireNonNull(now, "now");
    if (value == null) {
      return Optional.empty();
    }
    String v = value.strip();
    if (v.isEmpty()) {
      return Optional.empty();
    }
    if (isDigits(v)) {
      return Optional.of(new RetryAfter(Duration.ofSeconds(saturatingSeconds(v)), null));
    }
    return parseHttpDate(v, now).map(d -> new RetryAfter(d.isAfter(now) ? Duration.between(now, d) : Duration.ZERO, d));
  }

  /**
   * Parses an HTTP-date in any of its three forms (RFC 9110 section 5.6.7). {@code now} resolves the
   * century of an RFC 850 date.
   */
  public static Optional<Instant> parseHttpDate(String value, Instant now) {
    if (value == null || value.length() > MAX_VALUE_CHARS) {
      return Optional.empty();
    }
    try {
      Matcher m = FIXDATE.matcher(value);
      if (m.matches()) {
        return Optional.of(instant(Integer.parseInt(m.group(3)), m.group(2), Integer.parseInt(m.group(1)), m, 4));
      }
      m = RFC850.matcher(value);
      if (m.matches()) {
        int nowYear = LocalDateTime.ofInstant(now, ZoneOffset.UTC).getYear();
        int yy = Integer.parseInt(m.group(3));
        int year = nowYear - Math.floorMod(nowYear, 100) + yy;
        if (year > nowYear + 50) {
          year -= 100;
        }
        return Optional.of(instant(year, m.group(2), Integer.parseInt(m.group(1)), m, 4));
      }
      m = ASCTIME.matcher(value);
      if (m.matches()) {
        return Optional.of(instant(Integer.parseInt(m.group(6)), m.group(1), Integer.parseInt(m.group(2).strip()), m, 3));
      }
    } catch (DateTimeException e) {
      // 31 Feb and the like: syntactically an HTTP-date, but no such day; the value is malformed.
      return Optional.empty();
    }
    return Optional.empty();
  }

  private static Instant instant(int year, String month, int day, Matcher m, int timeGroup) {
    int hour = Integer.parseInt(m.group(timeGroup));
    int minute = Integer.parseInt(m.group(timeGroup + 1));
    int second = Integer.parseInt(m.group(timeGroup + 2));
    // time-of-day allows second 60 for a leap second (RFC 9110 section 5.6.7); java.time does not.
    return LocalDateTime.of(year, MONTHS.indexOf(month) / 3 + 1, day, hour, minute, Math.min(second, 59))
        .toInstant(ZoneOffset.UTC);
  }

  /** Formats an instant as IMF-fixdate, the form a sender must generate (RFC 9110 section 5.6.7). */
  public static String formatHttpDate(Instant instant) {
    return IMF_FIXDATE.format(instant);
  }

  /** Formats a delay as delay-seconds, rounded up so that a client waiting that long is not early. */
  public static String formatDelaySeconds(Duration delay) {
    if (delay.isNegative()) {
      throw new IllegalArgumentException("delay: expected zero or more, got " + delay);
    }
    long s = delay.getSeconds() + (delay.getNano() > 0 ? 1 : 0);
    return Long.toString(Math.min(s, MAX_DELAY_SECONDS));
  }

  /** How long to wait, from the {@code now} the value was parsed against. */
  public Duration delay() {
    return delay;
  }

  /** {@link #delay()} in whole seconds, rounded up. */
  public long delaySeconds() {
    return delay.getSeconds() + (delay.getNano() > 0 ? 1 : 0);
  }

  /** The HTTP-date sent, when the value was a date. */
  public Optional<Instant> date() {
    return Optional.ofNullable(date);
  }

  /** The value as delay-seconds. */
  public String toDelaySeconds() {
    return formatDelaySeconds(delay);
  }

  private static boolean isDigits(String v) {
    for (int i = 0; i < v.length(); i++) {
      char c = v.charAt(i);
      if (c < '0' || c > '9') {
        return false;
      }
    }
    return true;
  }

  private static long saturatingSeconds(String digits) {
    long n = 0;
    for (int i = 0; i < digits.length(); i++) {
      n = n * 10 + (digits.charAt(i) - '0');
      if (n >= MAX_DELAY_SECONDS) {
        return MAX_DELAY_SECONDS;
      }
    }
    return n;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RetryAfter && ((RetryAfter) o).delay.equals(delay) && Objects.equals(((RetryAfter) o).date, date);
  }

  @Override
  public int hashCode() {
    return delay.hashCode() * 31 + Objects.hashCode(date);
  }

  @Override
  public String toString() {
    return "Retry-After " + (date != null ? formatHttpDate(date) + " (" + delay + ")" : toDelaySeconds());
  }
}
