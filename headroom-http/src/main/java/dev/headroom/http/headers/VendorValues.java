package dev.headroom.http.headers;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The value grammars of the vendors' fields, each a pure function from the text sent to a value or
 * to nothing. Every number saturates: a count or a delay too large for the model becomes
 * {@link QuotaPolicyItem#MAX_INTEGER} (seconds, for delays), never an exception or a wrap, and
 * negative or malformed values are nothing. Values longer than {@value #MAX_VALUE_CHARS}
 * characters are not examined.
 */
final class VendorValues {

  /** Longest value examined: the longest valid one (an RFC 3339 instant with nanoseconds) is 35. */
  static final int MAX_VALUE_CHARS = 64;

  private static final Pattern DIGITS = Pattern.compile("[0-9]{1," + MAX_VALUE_CHARS + "}");
  private static final Pattern DECIMAL = Pattern.compile("[0-9]{1,40}(\\.[0-9]{1,20})?");
  /** Go's {@code time.Duration.String()} and {@code time.ParseDuration} without a sign: {@code 1h2m3.5s}, {@code 12ms}. */
  private static final Pattern GO_DURATION = Pattern.compile("(?:[0-9]{1,20}(?:\\.[0-9]{0,20})?(?:h|m|s|ms|us|µs|μs|ns))+|0");
  private static final Pattern GO_TERM = Pattern.compile("([0-9]{1,20}(?:\\.[0-9]{0,20})?)(h|ms|m|s|us|µs|μs|ns)");
  private static final BigDecimal MAX_SECONDS = BigDecimal.valueOf(QuotaPolicyItem.MAX_INTEGER);
  private static final BigDecimal BILLION = BigDecimal.valueOf(1_000_000_000L);

  private VendorValues() {}

  /** A count: digits only, saturated at {@link QuotaPolicyItem#MAX_INTEGER}. */
  static OptionalLong count(String value) {
    String v = strip(value);
    if (v == null || !DIGITS.matcher(v).matches()) {
      return OptionalLong.empty();
    }
    String significant = v.replaceFirst("^0+(?=.)", "");
    return OptionalLong.of(significant.length() > 15 ? QuotaPolicyItem.MAX_INTEGER
        : Math.min(Long.parseLong(significant), QuotaPolicyItem.MAX_INTEGER));
  }

  /** Seconds with an optional fraction ({@code 1.234}), saturated. */
  static Optional<Duration> seconds(String value) {
    String v = strip(value);
    if (v == null || !DECIMAL.matcher(v).matches()) {
      return Optional.empty();
    }
    return Optional.of(ofSeconds(new BigDecimal(v)));
  }

  /** Milliseconds as digits ({@code retry-after-ms: 1500}), saturated. */
  static Optional<Duration> millis(String value) {
    String v = strip(value);
    if (v == null || !DECIMAL.matcher(v).matches()) {
      return Optional.empty();
    }
    return Optional.of(ofSeconds(new BigDecimal(v).movePointLeft(3)));
  }

  /**
   * A Go duration as {@code time.Duration.String()} writes it and {@code time.ParseDuration} reads
   * it, without a sign: a sequence of decimal numbers, each with a unit {@code h}, {@code m},
   * {@code s}, {@code ms}, {@code us} ({@code µs}) or {@code ns}; {@code 0} alone. Saturated.
   */
  static Optional<Duration> goDuration(String value) {
    String v = strip(value);
    if (v == null || !GO_DURATION.matcher(v).matches()) {
      return Optional.empty();
    }
    BigDecimal seconds = BigDecimal.ZERO;
    Matcher m = GO_TERM.matcher(v);
    while (m.find()) {
      BigDecimal n = new BigDecimal(m.group(1).endsWith(".") ? m.group(1) + "0" : m.group(1));
      switch (m.group(2)) {
        case "h" -> seconds = seconds.add(n.multiply(BigDecimal.valueOf(3600)));
        case "m" -> seconds = seconds.add(n.multiply(BigDecimal.valueOf(60)));
        case "s" -> seconds = seconds.add(n);
        case "ms" -> seconds = seconds.add(n.movePointLeft(3));
        case "ns" -> seconds = seconds.add(n.movePointLeft(9));
        default -> seconds = seconds.add(n.movePointLeft(6));
      }
      if (seconds.compareTo(MAX_SECONDS) > 0) {
        return Optional.of(Duration.ofSeconds(QuotaPolicyItem.MAX_INTEGER));
      }
    }
    return Optional.of(ofSeconds(seconds));
  }

  /**
   * An instant as RFC 3339 section 5.6 {@code date-time} writes it, which is ISO 8601's extended
   * form with an offset ({@code 2026-03-26T16:00:00Z}, {@code 2026-03-26T18:00:00.5+02:00}); the
   * seconds may be left out ({@code 2026-03-26T16:00Z}, as Atlassian sends it). Years 0000 to 9999.
   */
  static Optional<Instant> instant(String value) {
    String v = strip(value);
    if (v == null || v.length() < 16 || !Character.isDigit(v.charAt(0))) {
      return Optional.empty();
    }
    String iso = v.replace('t', 'T').replace('z', 'Z');
    // A leap second (time-second 60, RFC 3339 section 5.7) is the first instant of the next minute.
    boolean leap = iso.length() > 19 && iso.startsWith(":60", 16);
    try {
      Instant at = OffsetDateTime.parse(leap ? iso.substring(0, 17) + "59" + iso.substring(19) : iso,
          DateTimeFormatter.ISO_OFFSET_DATE_TIME).toInstant();
      return Optional.of(leap ? at.plusSeconds(1) : at);
    } catch (DateTimeException e) {
      return Optional.empty();
    }
  }

  /** Epoch seconds with an optional fraction ({@code 1470173023.123}); saturated at the largest instant. */
  static Optional<Instant> epochSeconds(String value) {
    return seconds(value).map(d -> Instant.ofEpochSecond(d.getSeconds(), d.getNano()));
  }

  /** Whole seconds from {@code now} to {@code instant}, rounded up; zero when it has passed; saturated. */
  static long secondsUntil(Instant instant, Instant now) {
    if (!instant.isAfter(now)) {
      return 0;
    }
    Duration d = Duration.between(now, instant);
    return Math.min(QuotaPolicyItem.MAX_INTEGER, d.getSeconds() + (d.getNano() > 0 ? 1 : 0));
  }

  /** Whole seconds of a delay, rounded up, saturated. */
  static long wholeSeconds(Duration d) {
    return Math.min(QuotaPolicyItem.MAX_INTEGER, d.getSeconds() + (d.getNano() > 0 ? 1 : 0));
  }

  private static Duration ofSeconds(BigDecimal seconds) {
    if (seconds.compareTo(MAX_SECONDS) >= 0) {
      return Duration.ofSeconds(QuotaPolicyItem.MAX_INTEGER);
    }
    BigDecimal nanos = seconds.multiply(BILLION).setScale(0, RoundingMode.CEILING);
    BigDecimal[] qr = nanos.divideAndRemainder(BILLION);
    return Duration.ofSeconds(qr[0].longValueExact(), qr[1].longValueExact());
  }

  private static String strip(String value) {
    if (value == null || value.length() > MAX_VALUE_CHARS) {
      return null;
    }
    String v = value.strip();
    return v.isEmpty() ? null : v;
  }
}
