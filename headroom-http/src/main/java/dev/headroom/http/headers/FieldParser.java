package dev.headroom.http.headers;

import static dev.headroom.http.HeaderNames.RATELIMIT;
import static dev.headroom.http.HeaderNames.RATELIMIT_LIMIT;
import static dev.headroom.http.HeaderNames.RATELIMIT_PARTITION;
import static dev.headroom.http.HeaderNames.RATELIMIT_POLICY;
import static dev.headroom.http.HeaderNames.RATELIMIT_REMAINING;
import static dev.headroom.http.HeaderNames.RATELIMIT_RESET;
import static dev.headroom.http.HeaderNames.RETRY_AFTER;
import static dev.headroom.http.HeaderNames.X_RATELIMIT_LIMIT;
import static dev.headroom.http.HeaderNames.X_RATELIMIT_REMAINING;
import static dev.headroom.http.HeaderNames.X_RATELIMIT_RESET;

import dev.headroom.QuotaUnit;
import dev.headroom.http.RetryAfter;
import dev.headroom.http.headers.Diagnostic.Kind;
import dev.headroom.http.sf.StructuredFields;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import org.greenbytes.http.sfv.BooleanItem;
import org.greenbytes.http.sfv.ByteSequenceItem;
import org.greenbytes.http.sfv.Dictionary;
import org.greenbytes.http.sfv.IntegerItem;
import org.greenbytes.http.sfv.Item;
import org.greenbytes.http.sfv.ListElement;
import org.greenbytes.http.sfv.OuterList;
import org.greenbytes.http.sfv.Parameters;
import org.greenbytes.http.sfv.StringItem;
import org.greenbytes.http.sfv.TokenItem;

/**
 * One parse of one response's fields. Not thread-safe; {@link RateLimitFields#parse} makes a new
 * one per call. Each field is read independently: a malformed field or member is dropped with a
 * diagnostic and never affects the others.
 */
final class FieldParser {

  /** X-RateLimit-Reset values at or above this are epoch seconds (2001-09-09), not delta seconds. */
  static final long EPOCH_SECONDS_THRESHOLD = 1_000_000_000L;

  /** X-RateLimit-Reset values at or above this are epoch milliseconds. */
  static final long EPOCH_MILLIS_THRESHOLD = 100_000_000_000L;

  private final Function<String, List<String>> lookup;
  private final Instant now;
  private final List<QuotaPolicyItem> policies = new ArrayList<>();
  private final List<ServiceLimitItem> limits = new ArrayList<>();
  private final List<PartitionItem> partitions = new ArrayList<>();
  private final Set<HeaderDialect> dialects = EnumSet.noneOf(HeaderDialect.class);
  private final List<Diagnostic> diagnostics = new ArrayList<>();
  private RetryAfter retryAfter;
  /**
   * The dialect of the -08+ {@code RateLimit-Policy}, whose wire form the editor's draft after -11
   * keeps: {@link HeaderDialect#IETF_NEXT} when every {@code RateLimit} member was in its spelling.
   */
  private HeaderDialect policyDialect;

  /** The names of the fields present, when known (empty when only {@link #lookup} is). */
  private final Collection<String> names;

  FieldParser(Function<String, List<String>> lookup, Collection<String> names, Instant now) {
    this.lookup = lookup;
    this.names = names;
    this.now = now;
  }

  RateLimitFields parse() {
    guarded(RETRY_AFTER, this::retryAfter);
    // Vendors' own fields first: a field one of them claims is read by no other dialect.
    VendorFields vendor = new VendorFields(this::lines, this::single, names, this::note, now, ra -> retryAfter = ra, policies,
        limits);
    VendorReaders.read(vendor);
    // RateLimit first: whether it is the -07 Dictionary decides the dialect of integer policies.
    boolean[] draft07 = new boolean[1];
    guarded(RATELIMIT, () -> draft07[0] = rateLimit());
    boolean[] legacyPolicies = new boolean[1];
    guarded(RATELIMIT_POLICY, () -> legacyPolicies[0] = rateLimitPolicy(draft07[0]));
    if (!vendor.claimed(RATELIMIT_LIMIT)) {
      guarded(RATELIMIT_LIMIT, () -> legacyTriple(legacyPolicies[0]));
    }
    if (!vendor.claimed(X_RATELIMIT_LIMIT)) {
      guarded(X_RATELIMIT_LIMIT, this::xRateLimit);
    }
    guarded(RATELIMIT_PARTITION, this::rateLimitPartition);
    guarded(RATELIMIT, this::checkConsistency);
    if (dialects.size() > 1) {
      note(Kind.MIXED_DIALECTS, RATELIMIT, "dialects " + dialects);
    }
    return new RateLimitFields(policies, limits, partitions, dialects, vendor.vendors(), retryAfter, diagnostics);
  }

  /** Runs one step; a defect in it becomes an INTERNAL diagnostic instead of reaching the caller. */
  private void guarded(String field, Runnable step) {
    try {
      step.run();
    } catch (RuntimeException e) {
      note(Kind.INTERNAL, field, e.toString());
    }
  }

  // ---- field access

  /** The field's lines, or null when absent or too large (reported). */
  private List<String> lines(String name) {
    List<String> lines = lookup.apply(name);
    if (lines == null || lines.isEmpty()) {
      return null;
    }
    if (lines.size() > StructuredFields.MAX_FIELD_LINES) {
      note(Kind.FIELD_TOO_LARGE, name, lines.size() + " field lines, at most " + StructuredFields.MAX_FIELD_LINES);
      return null;
    }
    long chars = 0;
    for (String l : lines) {
      if (l == null) {
        return null;
      }
      chars += l.length();
    }
    if (chars > StructuredFields.MAX_FIELD_CHARS) {
      note(Kind.FIELD_TOO_LARGE, name, chars + " characters, at most " + StructuredFields.MAX_FIELD_CHARS);
      return null;
    }
    return lines;
  }

  /** A singleton field's one value; repeated identical lines count as one. */
  private String single(String name) {
    List<String> lines = lines(name);
    if (lines == null) {
      return null;
    }
    String first = lines.get(0);
    for (String l : lines) {
      if (!l.equals(first)) {
        note(Kind.REPEATED_FIELD, name, "values " + lines);
        return null;
      }
    }
    return first;
  }

  // ---- Retry-After (RFC 9110 section 10.2.3)

  private void retryAfter() {
    String v = single(RETRY_AFTER);
    if (v == null) {
      return;
    }
    Optional<RetryAfter> ra = RetryAfter.parse(v, now);
    if (ra.isEmpty()) {
      note(Kind.BAD_RETRY_AFTER, RETRY_AFTER, "'" + v + "' is neither delay-seconds nor an HTTP-date");
    }
    retryAfter = ra.orElse(null);
  }

  // ---- RateLimit: the -08+ List, or the -07 Dictionary

  private boolean rateLimit() {
    List<String> lines = lines(RATELIMIT);
    if (lines == null) {
      return false;
    }
    OuterList list;
    try {
      list = StructuredFields.parseList(lines);
    } catch (StructuredFields.FieldTooLargeException e) {
      note(Kind.FIELD_TOO_LARGE, RATELIMIT, e.getMessage());
      return false;
    } catch (IllegalArgumentException listError) {
      return draft07RateLimit(lines, listError);
    }
    for (ListElement<?> member : list.get()) {
      ietfLimit(member);
    }
    return false;
  }

  /**
   * A -08+ service limit, in either spelling: {@code r}, {@code t} (draft-08 to -11), or {@code a},
   * {@code w}, {@code c} (the editor's draft after -11, ietf-wg-httpapi/ratelimit-headers pull
   * request 166, which renames the first two and adds the cost). A member with {@code a}, {@code w}
   * or {@code c} is read in the new spelling, where {@code r} and {@code t} are unknown parameters
   * that "MUST be ignored"; any other member in the old one, where unknown parameters "can be
   * regarded as comments" (draft-09 section 4.1). Either way they are noted, never used.
   */
  private void ietfLimit(ListElement<?> member) {
    String name = name(RATELIMIT, member);
    if (name == null) {
      return;
    }
    Parameters params = member.getParams();
    boolean next = params.containsKey("a") || params.containsKey("w") || params.containsKey("c");
    String remainingKey = next ? "a" : "r";
    String resetKey = next ? "w" : "t";
    long r = -1;
    long t = -1;
    long c = -1;
    byte[] pk = null;
    for (Map.Entry<String, Item<?>> p : params.entrySet()) {
      String key = p.getKey();
      if (key.equals(remainingKey)) {
        r = nonNegative(RATELIMIT, name, key, p.getValue());
        if (r < 0) {
          return;
        }
      } else if (key.equals(resetKey)) {
        t = nonNegative(RATELIMIT, name, key, p.getValue());
        if (t < 0) {
          return;
        }
      } else if (next && key.equals("c")) {
        c = nonNegative(RATELIMIT, name, key, p.getValue());
        if (c < 0) {
          return;
        }
      } else if (key.equals("pk")) {
        pk = bytes(RATELIMIT, name, p.getValue());
        if (pk == null) {
          return;
        }
      } else {
        note(Kind.UNKNOWN_PARAMETER, RATELIMIT, "'" + name + "' parameter " + key
            + (next ? " (ignored, as the editor's draft after -11 requires)" : " (a comment)"));
      }
    }
    if (r < 0) {
      note(Kind.MISSING_REMAINING, RATELIMIT, "'" + name + "' has no " + remainingKey);
    }
    HeaderDialect dialect = next ? HeaderDialect.IETF_NEXT : HeaderDialect.IETF;
    policyDialect = next && policyDialect != HeaderDialect.IETF ? HeaderDialect.IETF_NEXT : HeaderDialect.IETF;
    ServiceLimitItem.Builder b = ServiceLimitItem.builder().name(name).dialect(dialect);
    if (r >= 0) {
      b.remaining(r);
    }
    if (t >= 0) {
      b.reset(Duration.ofSeconds(t));
    }
    if (c >= 0) {
      b.cost(c);
    }
    if (pk != null) {
      b.partitionKey(pk);
    }
    limits.add(b.build());
    dialects.add(dialect);
  }

  private boolean draft07RateLimit(List<String> lines, IllegalArgumentException listError) {
    Dictionary dict;
    try {
      dict = StructuredFields.parseDictionary(lines);
    } catch (IllegalArgumentException e) {
      note(Kind.SYNTAX, RATELIMIT, "neither a List (" + listError.getMessage() + ") nor a Dictionary");
      return false;
    }
    Map<String, ListElement<?>> m = dict.get();
    if (!m.containsKey("limit") && !m.containsKey("remaining") && !m.containsKey("reset")) {
      note(Kind.SYNTAX, RATELIMIT, "not a List (" + listError.getMessage() + "), and a Dictionary without limit, remaining or reset");
      return false;
    }
    long limit = -1;
    long remaining = -1;
    long reset = -1;
    for (Map.Entry<String, ListElement<?>> e : m.entrySet()) {
      String key = e.getKey();
      if (!key.equals("limit") && !key.equals("remaining") && !key.equals("reset")) {
        note(Kind.UNKNOWN_PARAMETER, RATELIMIT, "member " + key + " (a comment)");
        continue;
      }
      long v = e.getValue() instanceof Item ? nonNegative(RATELIMIT, "draft-07", key, (Item<?>) e.getValue()) : -1;
      if (v < 0) {
        if (!(e.getValue() instanceof Item)) {
          note(Kind.BAD_PARAMETER, RATELIMIT, key + " is an Inner List, expected a non-negative Integer");
        }
        return false;
      }
      if (key.equals("limit")) {
        limit = v;
      } else if (key.equals("remaining")) {
        remaining = v;
      } else {
        reset = v;
      }
    }
    if (remaining < 0) {
      note(Kind.MISSING_REMAINING, RATELIMIT, "draft-07 Dictionary has no remaining");
    }
    limits.add(legacyLimit(HeaderDialect.DRAFT_07, limit, remaining, reset));
    dialects.add(HeaderDialect.DRAFT_07);
    return true;
  }

  // ---- RateLimit-Policy: named items (-08+) or integer items (-04 to -07)

  /** Returns whether integer (pre -08) policies were seen. */
  private boolean rateLimitPolicy(boolean draft07) {
    List<String> lines = lines(RATELIMIT_POLICY);
    if (lines == null) {
      return false;
    }
    OuterList list = list(RATELIMIT_POLICY, lines);
    if (list == null) {
      return false;
    }
    boolean legacy = false;
    for (ListElement<?> member : list.get()) {
      if (member instanceof IntegerItem) {
        legacy |= legacyPolicy(RATELIMIT_POLICY, (IntegerItem) member, draft07 ? HeaderDialect.DRAFT_07 : HeaderDialect.DRAFT_06);
      } else {
        ietfPolicy(member);
      }
    }
    return legacy;
  }

  private void ietfPolicy(ListElement<?> member) {
    String name = name(RATELIMIT_POLICY, member);
    if (name == null) {
      return;
    }
    HeaderDialect dialect = policyDialect == null ? HeaderDialect.IETF : policyDialect;
    QuotaPolicyItem.Builder b = QuotaPolicyItem.builder().name(name).dialect(dialect);
    boolean hasQuota = false;
    for (Map.Entry<String, Item<?>> p : member.getParams().entrySet()) {
      Item<?> v = p.getValue();
      switch (p.getKey()) {
        case "q": {
          long q = nonNegative(RATELIMIT_POLICY, name, "q", v);
          if (q < 0) {
            return;
          }
          b.quota(q);
          hasQuota = true;
          break;
        }
        case "qu": {
          if (!(v instanceof StringItem) || ((StringItem) v).get().isEmpty() || ((StringItem) v).get().length() > 64) {
            note(Kind.BAD_PARAMETER, RATELIMIT_POLICY, "'" + name + "' qu=" + v.serialize() + ", expected a String naming a quota unit");
            return;
          }
          String unit = ((StringItem) v).get();
          if (!isRegisteredUnit(unit)) {
            note(Kind.UNKNOWN_QUOTA_UNIT, RATELIMIT_POLICY, "'" + name + "' qu=\"" + unit + "\", expected requests, content-bytes or concurrent-requests");
          }
          b.unit(unit);
          break;
        }
        case "w": {
          long w = positive(RATELIMIT_POLICY, name, v);
          if (w < 0) {
            return;
          }
          b.window(Duration.ofSeconds(w));
          break;
        }
        case "pk": {
          byte[] pk = bytes(RATELIMIT_POLICY, name, v);
          if (pk == null) {
            return;
          }
          b.partitionKey(pk);
          break;
        }
        default:
          note(Kind.UNKNOWN_PARAMETER, RATELIMIT_POLICY, "'" + name + "' parameter " + p.getKey() + " (a comment)");
      }
    }
    if (!hasQuota) {
      note(Kind.MISSING_QUOTA, RATELIMIT_POLICY, "'" + name + "' has no q; ignored");
      return;
    }
    QuotaPolicyItem item = b.build();
    for (QuotaPolicyItem other : policies) {
      if (other.dialect().namesPolicies() && other.sameIdentity(name, item.pkUnsafe())) {
        note(Kind.DUPLICATE_POLICY, RATELIMIT_POLICY, "'" + name + "' advertised twice");
        break;
      }
    }
    policies.add(item);
    dialects.add(dialect);
  }

  /** An {@code expiring-limit}-style quota policy {@code q;w=w} (draft-polli-02 section 2.3). */
  private boolean legacyPolicy(String field, IntegerItem item, HeaderDialect dialect) {
    long q = item.getAsLong();
    if (q < 0) {
      note(Kind.BAD_PARAMETER, field, "quota-policy " + item.serialize() + ", expected a non-negative Integer");
      return false;
    }
    QuotaPolicyItem.Builder b = QuotaPolicyItem.builder().quota(q).dialect(dialect);
    for (Map.Entry<String, Item<?>> p : item.getParams().entrySet()) {
      if (p.getKey().equals("w")) {
        long w = positive(field, Long.toString(q), p.getValue());
        if (w < 0) {
          return false;
        }
        b.window(Duration.ofSeconds(w));
      } else {
        note(Kind.UNKNOWN_PARAMETER, field, "quota-policy " + q + " parameter " + p.getKey() + " (a quota-comment)");
      }
    }
    policies.add(b.build());
    dialects.add(dialect);
    return true;
  }

  // ---- RateLimit-Limit, -Remaining, -Reset (draft-polli-02 section 3, ietf -00 to -06)

  private void legacyTriple(boolean policiesInPolicyField) {
    List<String> limitLines = lines(RATELIMIT_LIMIT);
    String remainingValue = legacyItemLines(RATELIMIT_REMAINING);
    String resetValue = legacyItemLines(RATELIMIT_RESET);
    long limit = -1;
    boolean policiesInLimit = false;
    if (limitLines != null) {
      OuterList list = list(RATELIMIT_LIMIT, limitLines);
      if (list != null && !list.get().isEmpty()) {
        ListElement<?> first = list.get().get(0);
        if (first instanceof IntegerItem && ((IntegerItem) first).getAsLong() >= 0) {
          limit = ((IntegerItem) first).getAsLong();
          if (!first.getParams().isEmpty()) {
            note(Kind.UNKNOWN_PARAMETER, RATELIMIT_LIMIT, "expiring-limit " + first.serialize() + " has parameters");
          }
          for (ListElement<?> member : list.get().subList(1, list.get().size())) {
            if (member instanceof IntegerItem) {
              policiesInLimit |= legacyPolicy(RATELIMIT_LIMIT, (IntegerItem) member, HeaderDialect.DRAFT_03);
            } else {
              note(Kind.BAD_PARAMETER, RATELIMIT_LIMIT, "quota-policy " + member.serialize() + ", expected an Integer");
            }
          }
        } else {
          note(Kind.SYNTAX, RATELIMIT_LIMIT, "expiring-limit " + first.serialize() + ", expected a non-negative Integer");
        }
      }
    }
    long remaining = legacyInteger(RATELIMIT_REMAINING, remainingValue);
    long reset = legacyInteger(RATELIMIT_RESET, resetValue);
    if (limit < 0 && remaining < 0 && reset < 0) {
      return;
    }
    HeaderDialect dialect = !policiesInLimit && policiesInPolicyField ? HeaderDialect.DRAFT_06 : HeaderDialect.DRAFT_03;
    limits.add(legacyLimit(dialect, limit, remaining, reset));
    dialects.add(dialect);
  }

  /** "This header MUST NOT occur multiple times" (draft-polli-02 sections 3.2, 3.3). */
  private String legacyItemLines(String name) {
    return single(name);
  }

  private long legacyInteger(String field, String value) {
    if (value == null) {
      return -1;
    }
    try {
      Item<?> item = StructuredFields.parseItem(List.of(value));
      if (item instanceof IntegerItem && ((IntegerItem) item).getAsLong() >= 0) {
        if (!item.getParams().isEmpty()) {
          note(Kind.UNKNOWN_PARAMETER, field, "parameters " + item.getParams().serialize());
        }
        return ((IntegerItem) item).getAsLong();
      }
      note(Kind.SYNTAX, field, "'" + value + "', expected a non-negative Integer");
    } catch (IllegalArgumentException e) {
      note(Kind.SYNTAX, field, "'" + value + "': " + e.getMessage());
    }
    return -1;
  }

  private static ServiceLimitItem legacyLimit(HeaderDialect dialect, long limit, long remaining, long reset) {
    ServiceLimitItem.Builder b = ServiceLimitItem.builder().dialect(dialect);
    if (limit >= 0) {
      b.limit(limit);
    }
    if (remaining >= 0) {
      b.remaining(remaining);
    }
    if (reset >= 0) {
      b.reset(Duration.ofSeconds(reset));
    }
    return b.build();
  }

  // ---- X-RateLimit-* (de-facto; not Structured Fields)

  private void xRateLimit() {
    long limit = plainInteger(X_RATELIMIT_LIMIT, single(X_RATELIMIT_LIMIT));
    long remaining = plainInteger(X_RATELIMIT_REMAINING, single(X_RATELIMIT_REMAINING));
    long reset = xReset(single(X_RATELIMIT_RESET));
    if (limit < 0 && remaining < 0 && reset < 0) {
      return;
    }
    limits.add(legacyLimit(HeaderDialect.X_RATELIMIT, limit, remaining, reset));
    dialects.add(HeaderDialect.X_RATELIMIT);
  }

  private long plainInteger(String field, String value) {
    if (value == null) {
      return -1;
    }
    String v = value.strip();
    if (v.isEmpty() || v.length() > 15 || !v.chars().allMatch(c -> c >= '0' && c <= '9')) {
      note(Kind.SYNTAX, field, "'" + value + "', expected 1 to 15 digits");
      return -1;
    }
    return Long.parseLong(v);
  }

  /** Delta seconds, epoch seconds, epoch milliseconds, fractional seconds or an HTTP-date; whole seconds from now, rounded up. */
  private long xReset(String value) {
    if (value == null) {
      return -1;
    }
    String v = value.strip();
    Optional<Instant> date = RetryAfter.parseHttpDate(v, now);
    if (date.isPresent()) {
      return secondsUntil(date.get());
    }
    if (v.isEmpty() || v.length() > 20 || !v.matches("[0-9]{1,15}(\\.[0-9]{1,3})?")) {
      note(Kind.SYNTAX, X_RATELIMIT_RESET, "'" + value + "', expected seconds, epoch seconds or an HTTP-date");
      return -1;
    }
    BigDecimal n = new BigDecimal(v);
    if (n.compareTo(BigDecimal.valueOf(EPOCH_MILLIS_THRESHOLD)) >= 0) {
      note(Kind.EPOCH_RESET, X_RATELIMIT_RESET, v + " read as epoch milliseconds");
      return secondsUntil(Instant.ofEpochMilli(n.longValue()));
    }
    if (n.compareTo(BigDecimal.valueOf(EPOCH_SECONDS_THRESHOLD)) >= 0) {
      note(Kind.EPOCH_RESET, X_RATELIMIT_RESET, v + " read as epoch seconds");
      return secondsUntil(Instant.ofEpochSecond(n.longValue()));
    }
    return n.setScale(0, RoundingMode.CEILING).longValueExact();
  }

  private long secondsUntil(Instant instant) {
    if (!instant.isAfter(now)) {
      return 0;
    }
    Duration d = Duration.between(now, instant);
    return Math.min(QuotaPolicyItem.MAX_INTEGER, d.getSeconds() + (d.getNano() > 0 ? 1 : 0));
  }

  // ---- RateLimit-Partition (the editor's draft after -11)

  /** See {@link PartitionItem} for what is known of the grammar and how it is read. */
  private void rateLimitPartition() {
    List<String> lines = lines(RATELIMIT_PARTITION);
    if (lines == null) {
      return;
    }
    OuterList list = list(RATELIMIT_PARTITION, lines);
    if (list == null) {
      return;
    }
    for (ListElement<?> member : list.get()) {
      String name = name(RATELIMIT_PARTITION, member);
      if (name == null) {
        continue;
      }
      Set<String> dimensions = new LinkedHashSet<>();
      Map<String, String> fixed = new LinkedHashMap<>();
      for (Map.Entry<String, Item<?>> p : member.getParams().entrySet()) {
        Item<?> v = p.getValue();
        if (v instanceof BooleanItem && ((BooleanItem) v).get()) {
          dimensions.add(p.getKey());
        } else if (v instanceof StringItem) {
          fixed.put(p.getKey(), ((StringItem) v).get());
        } else if (v instanceof TokenItem) {
          fixed.put(p.getKey(), ((TokenItem) v).get());
        } else {
          note(Kind.UNKNOWN_PARAMETER, RATELIMIT_PARTITION, "'" + name + "' parameter " + p.getKey() + "="
              + v.serialize() + ", neither a dimension nor a value; ignored");
        }
      }
      partitions.add(new PartitionItem(name, dimensions, fixed));
      dialects.add(HeaderDialect.IETF_NEXT);
    }
  }

  // ---- consistency between fields

  private void checkConsistency() {
    boolean ietfPolicies = policies.stream().anyMatch(p -> p.dialect().namesPolicies());
    for (ServiceLimitItem l : limits) {
      if (l.vendor().isPresent()) {
        // A vendor's fields follow its documentation, not draft-09's consistency rules.
        continue;
      }
      long r = l.remainingOrMinus1();
      if (l.dialect().namesPolicies()) {
        QuotaPolicyItem match = RateLimitFields.match(policies, l);
        String name = l.name().orElse(null);
        if (match == null && ietfPolicies) {
          note(Kind.UNKNOWN_POLICY, RATELIMIT, "'" + name + "' is not in " + RATELIMIT_POLICY);
        }
        if (match != null && r > match.quota()) {
          note(Kind.REMAINING_ABOVE_QUOTA, RATELIMIT, "'" + name + "' r=" + r + " exceeds q=" + match.quota());
        }
      } else if (l.limitOrMinus1() >= 0 && r > l.limitOrMinus1()) {
        note(Kind.REMAINING_ABOVE_QUOTA, fieldOf(l.dialect()), "remaining " + r + " exceeds limit " + l.limitOrMinus1());
      }
      if (retryAfter != null && l.resetOrMinus1() >= 0
          && Math.abs(l.resetOrMinus1() - retryAfter.delaySeconds()) > 1) {
        // Draft-09 section 6: t and Retry-After reference the same moment. Draft-10 and -11 section
        // 6: Retry-After is not earlier than t, so an earlier t is theirs, not a disagreement.
        boolean earlier = l.resetOrMinus1() < retryAfter.delaySeconds();
        Kind kind = earlier && l.dialect().namesPolicies() ? Kind.RESET_BEFORE_RETRY_AFTER
            : Kind.RESET_DISAGREES_WITH_RETRY_AFTER;
        note(kind, fieldOf(l.dialect()),
            l.name().map(n -> "'" + n + "' ").orElse("") + "reset " + l.resetOrMinus1() + "s, Retry-After "
                + retryAfter.delaySeconds() + "s");
      }
    }
  }

  private static String fieldOf(HeaderDialect d) {
    switch (d) {
      case X_RATELIMIT: return X_RATELIMIT_RESET;
      case DRAFT_03: case DRAFT_06: return RATELIMIT_RESET;
      default: return RATELIMIT;
    }
  }

  // ---- member helpers

  private OuterList list(String field, List<String> lines) {
    try {
      return StructuredFields.parseList(lines);
    } catch (StructuredFields.FieldTooLargeException e) {
      note(Kind.FIELD_TOO_LARGE, field, e.getMessage());
    } catch (IllegalArgumentException e) {
      note(Kind.SYNTAX, field, e.getMessage());
    }
    return null;
  }

  /** The identifier of a -08+ member: a String, or (with a warning) a Token; null when ignored. */
  private String name(String field, ListElement<?> member) {
    if (!(member instanceof Item)) {
      note(Kind.INNER_LIST, field, member.serialize() + " is an Inner List; ignored");
      return null;
    }
    if (member instanceof StringItem) {
      String s = ((StringItem) member).get();
      if (s.isEmpty() || s.length() > QuotaPolicyItem.MAX_NAME_CHARS) {
        note(Kind.BAD_NAME, field, "identifier of " + s.length() + " characters, expected 1 to " + QuotaPolicyItem.MAX_NAME_CHARS);
        return null;
      }
      return s;
    }
    if (member instanceof TokenItem) {
      String s = ((TokenItem) member).get();
      if (s.length() > QuotaPolicyItem.MAX_NAME_CHARS) {
        note(Kind.BAD_NAME, field, "identifier of " + s.length() + " characters, expected 1 to " + QuotaPolicyItem.MAX_NAME_CHARS);
        return null;
      }
      note(Kind.NAME_IS_TOKEN, field, "identifier " + s + " is a Token, expected a String \"" + s + "\"");
      return s;
    }
    note(Kind.BAD_NAME, field, "member " + member.serialize() + ", expected a String identifier; ignored");
    return null;
  }

  private long nonNegative(String field, String name, String param, Item<?> v) {
    if (v instanceof IntegerItem && ((IntegerItem) v).getAsLong() >= 0) {
      return ((IntegerItem) v).getAsLong();
    }
    note(Kind.BAD_PARAMETER, field, "'" + name + "' " + param + "=" + v.serialize() + ", expected a non-negative Integer; ignored");
    return -1;
  }

  private long positive(String field, String name, Item<?> v) {
    if (v instanceof IntegerItem && ((IntegerItem) v).getAsLong() > 0) {
      return ((IntegerItem) v).getAsLong();
    }
    note(Kind.BAD_PARAMETER, field, "'" + name + "' w=" + v.serialize() + ", expected a positive Integer; ignored");
    return -1;
  }

  private byte[] bytes(String field, String name, Item<?> v) {
    if (v instanceof ByteSequenceItem) {
      ByteBuffer b = ((ByteSequenceItem) v).get();
      if (b.remaining() <= QuotaPolicyItem.MAX_PK_BYTES) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
      }
    }
    note(Kind.BAD_PARAMETER, field, "'" + name + "' pk=" + v.serialize() + ", expected a Byte Sequence of at most "
        + QuotaPolicyItem.MAX_PK_BYTES + " bytes; ignored");
    return null;
  }

  private static boolean isRegisteredUnit(String unit) {
    for (QuotaUnit u : QuotaUnit.values()) {
      if (u.token().equals(unit)) {
        return true;
      }
    }
    return false;
  }

  private void note(Kind kind, String field, String detail) {
    // Bounded: at most one diagnostic per separator and field, and the separators are bounded.
    if (diagnostics.size() < 1024) {
      diagnostics.add(new Diagnostic(kind, field, detail));
    }
  }
}
