package dev.headroom.http.headers;

import dev.headroom.http.HeaderNames;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Kong Gateway's rate-limiting plugin, as its "Rate Limiting" page, section "Headers sent to the
 * client", documents it (https://docs.konghq.com/hub/kong-inc/rate-limiting/): one budget per
 * configured window, {@code X-RateLimit-Limit-<Window>} and {@code X-RateLimit-Remaining-<Window>}
 * for {@code Second}, {@code Minute}, {@code Hour}, {@code Day}, {@code Month} and {@code Year},
 * and {@code RateLimit-Limit}, {@code RateLimit-Remaining}, {@code RateLimit-Reset} (seconds) for
 * the window closest to running out. Kong's windows are fixed and start on the UTC second,
 * minute, hour, day, month and year, so each window's reset is the next such boundary on the
 * response's {@code Date}; the window the {@code RateLimit-*} fields describe (same limit and
 * remaining) takes their reset instead; when they describe none of them (a window of another size),
 * they are a budget of their own, {@code ratelimit}.
 *
 * <p>Kong's Rate Limiting Advanced plugin counts windows of any size ({@code config.window_size},
 * seconds) and names each by it: {@code X-RateLimit-Limit-30} and {@code X-RateLimit-Remaining-30}
 * for a window of 30 seconds, beside the same {@code RateLimit-*} fields (its "Rate Limiting
 * Advanced" examples). Each is a budget named by its size ({@code 30}) with that window, the
 * {@code RateLimit-*} reset when they describe it, else none; its windows are sliding by default
 * and fixed only when configured so, which the fields do not say. Such names carry the window, so
 * they are found only when the parse was given the names of the fields present (a header map or a
 * {@code java.net.http} response, not a lookup by name alone); at most {@value #MAX_SIZED_WINDOWS}
 * are read.
 *
 * <p>Recognised by the windowed fields; without them the {@code RateLimit-*} fields are draft-03's
 * and are read as such.
 */
final class KongReader implements VendorReader {

  private static final ChronoUnit[] WINDOWS = {ChronoUnit.SECONDS, ChronoUnit.MINUTES, ChronoUnit.HOURS, ChronoUnit.DAYS,
      ChronoUnit.MONTHS, ChronoUnit.YEARS};
  private static final String[] NAMES = {"Second", "Minute", "Hour", "Day", "Month", "Year"};
  /** Most windows of Kong's own sizes read from one response. */
  static final int MAX_SIZED_WINDOWS = 8;
  /** Most digits in a window's size: 9 (31 years of seconds). */
  private static final int MAX_SIZE_DIGITS = 9;

  @Override
  public VendorDialect dialect() {
    return VendorDialect.KONG;
  }

  @Override
  public boolean read(VendorFields f) {
    boolean any = false;
    for (String name : NAMES) {
      any |= f.value(HeaderNames.X_RATELIMIT_LIMIT + "-" + name) != null
          || f.value(HeaderNames.X_RATELIMIT_REMAINING + "-" + name) != null;
    }
    List<String> sizes = sizes(f);
    if (!any && sizes.isEmpty()) {
      return false;
    }
    f.claim(HeaderNames.RATELIMIT_LIMIT, HeaderNames.RATELIMIT_REMAINING, HeaderNames.RATELIMIT_RESET);
    OptionalLong tripleLimit = f.count(HeaderNames.RATELIMIT_LIMIT);
    OptionalLong tripleRemaining = f.count(HeaderNames.RATELIMIT_REMAINING);
    OptionalLong tripleReset = f.count(HeaderNames.RATELIMIT_RESET);
    boolean tripleUsed = false;
    boolean seen = false;
    for (int i = 0; i < NAMES.length; i++) {
      String limitField = HeaderNames.X_RATELIMIT_LIMIT + "-" + NAMES[i];
      String remainingField = HeaderNames.X_RATELIMIT_REMAINING + "-" + NAMES[i];
      if (f.value(limitField) == null && f.value(remainingField) == null) {
        continue;
      }
      f.claim(limitField, remainingField);
      OptionalLong limit = f.count(limitField);
      OptionalLong remaining = f.count(remainingField);
      OptionalLong reset = f.secondsUntil(Optional.of(nextBoundary(f.now(), WINDOWS[i])));
      if (!tripleUsed && tripleReset.isPresent() && limit.equals(tripleLimit) && remaining.equals(tripleRemaining)) {
        reset = tripleReset;
        tripleUsed = true;
      }
      long window = i < 4 ? WINDOWS[i].getDuration().getSeconds() : 0;
      seen |= f.budget(dialect(), NAMES[i].toLowerCase(Locale.ROOT)).limit(limit).remaining(remaining)
          .resetSeconds(reset).windowSeconds(window).add();
    }
    for (String size : sizes) {
      String limitField = HeaderNames.X_RATELIMIT_LIMIT + "-" + size;
      String remainingField = HeaderNames.X_RATELIMIT_REMAINING + "-" + size;
      f.claim(limitField, remainingField);
      OptionalLong limit = f.count(limitField);
      OptionalLong remaining = f.count(remainingField);
      OptionalLong reset = OptionalLong.empty();
      if (!tripleUsed && tripleReset.isPresent() && limit.equals(tripleLimit) && remaining.equals(tripleRemaining)) {
        reset = tripleReset;
        tripleUsed = true;
      }
      seen |= f.budget(dialect(), size).limit(limit).remaining(remaining).resetSeconds(reset)
          .windowSeconds(Long.parseLong(size)).add();
    }
    if (!tripleUsed && (tripleRemaining.isPresent() || tripleReset.isPresent())) {
      // The window they describe is none of the named ones (rate-limiting-advanced's own sizes).
      seen |= f.budget(dialect(), "ratelimit").limit(tripleLimit).remaining(tripleRemaining).resetSeconds(tripleReset)
          .add();
    }
    return seen;
  }

  /**
   * The window sizes of Kong's own windows among the names of the fields present
   * ({@code X-RateLimit-Limit-30}, {@code X-RateLimit-Remaining-30}: {@code 30}), each once, as
   * sent, at most {@value #MAX_SIZED_WINDOWS}; a size of zero or of more than
   * {@value #MAX_SIZE_DIGITS} digits is no window.
   */
  static List<String> sizes(VendorFields f) {
    Set<String> out = new LinkedHashSet<>();
    for (String name : f.names()) {
      if (out.size() >= MAX_SIZED_WINDOWS) {
        break;
      }
      String size = suffix(name, HeaderNames.X_RATELIMIT_LIMIT + "-");
      if (size == null) {
        size = suffix(name, HeaderNames.X_RATELIMIT_REMAINING + "-");
      }
      if (size != null && size.length() <= MAX_SIZE_DIGITS && size.chars().allMatch(c -> c >= '0' && c <= '9')
          && Long.parseLong(size) > 0) {
        out.add(size);
      }
    }
    return List.copyOf(out);
  }

  private static String suffix(String name, String prefix) {
    return name != null && name.length() > prefix.length() && name.regionMatches(true, 0, prefix, 0, prefix.length())
        ? name.substring(prefix.length()) : null;
  }

  /** The start of the next UTC {@code unit} after {@code now}. */
  static Instant nextBoundary(Instant now, ChronoUnit unit) {
    ZonedDateTime t = now.atZone(ZoneOffset.UTC);
    ZonedDateTime start = switch (unit) {
      case MONTHS -> t.truncatedTo(ChronoUnit.DAYS).withDayOfMonth(1);
      case YEARS -> t.truncatedTo(ChronoUnit.DAYS).withDayOfYear(1);
      default -> t.truncatedTo(unit);
    };
    return start.plus(1, unit).toInstant();
  }
}
