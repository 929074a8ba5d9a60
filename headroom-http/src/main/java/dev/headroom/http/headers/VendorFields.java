package dev.headroom.http.headers;

import dev.headroom.http.HeaderNames;
import dev.headroom.http.RetryAfter;
import dev.headroom.http.headers.Diagnostic.Kind;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * One response's fields as the vendor readers see them, and what they read from it. Not
 * thread-safe; one per parse. Values come through the parser's own field access (bounded,
 * repeated singleton fields refused), so a vendor's field obeys the limits every field does.
 */
final class VendorFields {

  /** Where findings go (the parser's diagnostics). */
  interface Notes {
    void note(Kind kind, String field, String detail);
  }

  private final Function<String, List<String>> lines;
  private final Function<String, String> single;
  /** The names of the fields present, when the caller knew them; empty otherwise. */
  private final Collection<String> names;
  private final Notes notes;
  private final Instant now;
  private final Consumer<RetryAfter> retryAfter;
  private final List<QuotaPolicyItem> policies;
  private final List<ServiceLimitItem> limits;
  private final Set<VendorDialect> vendors = EnumSet.noneOf(VendorDialect.class);
  /** Which dialect read each field. */
  private final Map<String, VendorDialect> claimed = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
  /** Each field's value as read once, so that a problem with it is reported once. */
  private final Map<String, Optional<String>> values = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
  /** The dialect whose reader runs. */
  private VendorDialect reading;

  /**
   * @param lines a field's lines, or null when absent or refused (and reported)
   * @param single a singleton field's one value, or null when absent or refused (and reported)
   * @param retryAfter receives a vendor's own retry-after, which is more precise than Retry-After
   */
  VendorFields(Function<String, List<String>> lines, Function<String, String> single, Collection<String> names, Notes notes,
      Instant now, Consumer<RetryAfter> retryAfter, List<QuotaPolicyItem> policies, List<ServiceLimitItem> limits) {
    this.lines = lines;
    this.single = single;
    this.names = names;
    this.notes = notes;
    this.now = now;
    this.retryAfter = retryAfter;
    this.policies = policies;
    this.limits = limits;
  }

  /**
   * The names of the fields present, as sent, when the parse was given them (a header map, a
   * {@code java.net.http} response); empty when it was given only a lookup by name.
   */
  Collection<String> names() {
    return names;
  }

  /** The response's time (its Date, else the client's clock): instants are read against it. */
  Instant now() {
    return now;
  }

  /** The field's value, or null when absent, refused, or read by another dialect already. */
  String value(String field) {
    VendorDialect owner = claimed.get(field);
    if (owner != null && owner != reading) {
      return null;
    }
    return values.computeIfAbsent(field, n -> Optional.ofNullable(single.apply(n))).orElse(null);
  }

  /** Marks fields as read by the running reader's dialect, so that no other dialect reads them. */
  void claim(String... fields) {
    for (String f : fields) {
      claimed.putIfAbsent(f, reading);
    }
  }

  /** Whether a vendor dialect read the field. */
  boolean claimed(String field) {
    return claimed.containsKey(field);
  }

  /** The dialects recognised. */
  Set<VendorDialect> vendors() {
    return vendors;
  }

  void note(Kind kind, String field, String detail) {
    notes.note(kind, field, detail);
  }

  /** A count field; a malformed value is reported and read as absent. */
  OptionalLong count(String field) {
    String v = value(field);
    OptionalLong n = v == null ? OptionalLong.empty() : VendorValues.count(v);
    if (v != null && n.isEmpty()) {
      syntax(field, v, "a count (digits)");
    }
    return n;
  }

  /** A field read by {@code grammar}; a malformed value is reported as not {@code expected} and read as absent. */
  <T> Optional<T> read(String field, Function<String, Optional<T>> grammar, String expected) {
    String v = value(field);
    Optional<T> out = v == null ? Optional.empty() : grammar.apply(v);
    if (v != null && out.isEmpty()) {
      syntax(field, v, expected);
    }
    return out;
  }

  /** A reset stated as an instant, in whole seconds from now. */
  OptionalLong secondsUntil(Optional<Instant> at) {
    return at.map(i -> OptionalLong.of(VendorValues.secondsUntil(i, now))).orElse(OptionalLong.empty());
  }

  /** A vendor's retry-after in its own unit (milliseconds), which replaces a Retry-After in whole seconds. */
  void retryAfter(Duration delay) {
    retryAfter.accept(RetryAfter.ofDelay(delay));
  }

  private void syntax(String field, String value, String expected) {
    note(Kind.SYNTAX, field, "'" + value + "', expected " + expected);
  }

  /**
   * Reads the IETF form behind a prefix ({@code Beta-RateLimit}, {@code Beta-RateLimit-Policy}) with
   * the IETF reader itself, and reports its limits as {@code vendor}'s.
   */
  void prefixed(String prefix, VendorDialect vendor) {
    RateLimitFields ietf = RateLimitFields.parse(name -> name.equalsIgnoreCase(HeaderNames.RATELIMIT)
        || name.equalsIgnoreCase(HeaderNames.RATELIMIT_POLICY) ? lines.apply(prefix + name) : null, now);
    policies.addAll(ietf.policies());
    ietf.limits().forEach(l -> limits.add(l.withVendor(vendor)));
    ietf.diagnostics().forEach(d -> note(d.kind(), prefix + d.field(), d.detail()));
  }

  /** Starts a budget of {@code vendor} named {@code name} (a name that is no valid identifier is replaced by the vendor's). */
  Budget budget(VendorDialect vendor, String name) {
    return new Budget(vendor, name);
  }

  /** Runs a reader; a defect in it becomes an INTERNAL diagnostic instead of reaching the caller. */
  void guarded(VendorReader reader) {
    reading = reader.dialect();
    try {
      if (reader.read(this)) {
        vendors.add(reader.dialect());
      }
    } catch (RuntimeException e) {
      note(Kind.INTERNAL, reader.dialect().token(), e.toString());
    }
  }

  /** One budget a vendor reports: a policy (when its limit is known) and a service limit of one name. */
  final class Budget {
    private final VendorDialect vendor;
    private final String name;
    private HeaderDialect shape = HeaderDialect.X_RATELIMIT;
    private String unit = "requests";
    private OptionalLong limit = OptionalLong.empty();
    private OptionalLong remaining = OptionalLong.empty();
    private OptionalLong resetSeconds = OptionalLong.empty();
    private long windowSeconds;

    private Budget(VendorDialect vendor, String name) {
      this.vendor = vendor;
      if (name == null || name.isEmpty() || name.length() > QuotaPolicyItem.MAX_NAME_CHARS || !ItemChecks.printable(name)) {
        if (name != null) {
          note(Kind.BAD_NAME, vendor.token(), "budget name of " + name.length() + " characters, expected 1 to "
              + QuotaPolicyItem.MAX_NAME_CHARS + " printable ASCII characters; read as '" + vendor.token() + "'");
        }
        this.name = vendor.token();
      } else {
        this.name = name;
      }
    }

    Budget unit(String unit) {
      this.unit = unit;
      return this;
    }

    Budget shape(HeaderDialect shape) {
      this.shape = shape;
      return this;
    }

    Budget limit(OptionalLong limit) {
      this.limit = limit;
      return this;
    }

    Budget remaining(OptionalLong remaining) {
      this.remaining = remaining;
      return this;
    }

    Budget resetSeconds(OptionalLong seconds) {
      this.resetSeconds = seconds;
      return this;
    }

    Budget reset(Optional<Duration> reset) {
      return resetSeconds(reset.map(d -> OptionalLong.of(VendorValues.wholeSeconds(d))).orElse(OptionalLong.empty()));
    }

    Budget windowSeconds(long seconds) {
      this.windowSeconds = seconds;
      return this;
    }

    /** Adds what is known; a budget without remaining, limit or reset adds nothing. Returns whether it added. */
    boolean add() {
      if (remaining.isEmpty() && limit.isEmpty() && resetSeconds.isEmpty()) {
        return false;
      }
      if (limit.isPresent()) {
        QuotaPolicyItem.Builder p = QuotaPolicyItem.builder().name(name).quota(limit.getAsLong()).unit(unit).dialect(shape);
        if (windowSeconds > 0) {
          p.window(Duration.ofSeconds(Math.min(windowSeconds, QuotaPolicyItem.MAX_INTEGER)));
        }
        policies.add(p.build());
      }
      ServiceLimitItem.Builder l = ServiceLimitItem.builder().name(name).dialect(shape).vendor(vendor);
      limit.ifPresent(l::limit);
      remaining.ifPresent(l::remaining);
      resetSeconds.ifPresent(t -> l.reset(Duration.ofSeconds(t)));
      limits.add(l.build());
      return true;
    }
  }
}
