package dev.headroom.http.headers;

import dev.headroom.http.HeaderNames;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;

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
 * <p>Recognised by the windowed fields; without them the {@code RateLimit-*} fields are draft-03's
 * and are read as such.
 */
final class KongReader implements VendorReader {

  private static final ChronoUnit[] WINDOWS = {ChronoUnit.SECONDS, ChronoUnit.MINUTES, ChronoUnit.HOURS, ChronoUnit.DAYS,
      ChronoUnit.MONTHS, ChronoUnit.YEARS};
  private static final String[] NAMES = {"Second", "Minute", "Hour", "Day", "Month", "Year"};

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
    if (!any) {
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
    if (!tripleUsed && (tripleRemaining.isPresent() || tripleReset.isPresent())) {
      // The window they describe is none of the named ones (rate-limiting-advanced's own sizes).
      seen |= f.budget(dialect(), "ratelimit").limit(tripleLimit).remaining(tripleRemaining).resetSeconds(tripleReset)
          .add();
    }
    return seen;
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
