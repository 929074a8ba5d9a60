package dev.headroom.http.headers;

import dev.headroom.http.RetryAfter;
import java.net.http.HttpHeaders;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * What a response's rate-limit fields say, in every dialect at once: the quota policies, the
 * service limits, the dialects seen, Retry-After, and {@link Diagnostic}s about everything that was
 * malformed or inconsistent.
 *
 * <p>Parsing never throws for anything a server sent: malformed fields and members are ignored, as
 * draft-ietf-httpapi-ratelimit-headers-09 section 7 requires, and reported as diagnostics. Input is
 * bounded (see {@link dev.headroom.http.sf.StructuredFields#MAX_FIELD_CHARS}) so that no response can
 * make the parser allocate without bound.
 *
 * <pre>{@code
 * RateLimitFields f = RateLimitFields.parse(response.headers(), ticker.instant());
 * for (ServiceLimitItem limit : f.limits()) { ... }
 * f.retryAfter().ifPresent(ra -> pause(ra.delay()));
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 */
public final class RateLimitFields {

  private final List<QuotaPolicyItem> policies;
  private final List<ServiceLimitItem> limits;
  private final List<PartitionItem> partitions;
  private final Set<HeaderDialect> dialects;
  private final Set<VendorDialect> vendors;
  private final RetryAfter retryAfter;
  private final List<Diagnostic> diagnostics;

  RateLimitFields(List<QuotaPolicyItem> policies, List<ServiceLimitItem> limits, List<PartitionItem> partitions,
      Set<HeaderDialect> dialects, Set<VendorDialect> vendors, RetryAfter retryAfter, List<Diagnostic> diagnostics) {
    this.policies = List.copyOf(policies);
    this.limits = List.copyOf(limits);
    this.partitions = List.copyOf(partitions);
    this.dialects = dialects.isEmpty() ? Set.of() : Collections.unmodifiableSet(EnumSet.copyOf(dialects));
    this.vendors = vendors.isEmpty() ? Set.of() : Collections.unmodifiableSet(EnumSet.copyOf(vendors));
    this.retryAfter = retryAfter;
    this.diagnostics = List.copyOf(diagnostics);
  }

  /**
   * Parses the fields found through {@code lookup}, which returns every field line of a name
   * (compared case-insensitively), or null or an empty list when there is none.
   *
   * @param now the client's current time, from its injected clock: resolves an HTTP-date Retry-After
   *     or an epoch X-RateLimit-Reset into a delay
   */
  public static RateLimitFields parse(Function<String, List<String>> lookup, Instant now) {
    Objects.requireNonNull(lookup, "lookup");
    Objects.requireNonNull(now, "now");
    return new FieldParser(lookup, List.of(), now).parse();
  }

  /**
   * {@link #parse(Function, Instant)} with the names of the fields present, for the forms whose
   * field names carry a value (Kong's {@code X-RateLimit-Limit-30}, a window of 30 seconds): read
   * only when the names are known.
   */
  static RateLimitFields parse(Function<String, List<String>> lookup, Collection<String> names, Instant now) {
    Objects.requireNonNull(lookup, "lookup");
    Objects.requireNonNull(names, "names");
    Objects.requireNonNull(now, "now");
    return new FieldParser(lookup, names, now).parse();
  }

  /** Parses a header map whose names are compared case-insensitively. */
  public static RateLimitFields parse(Map<String, List<String>> headers, Instant now) {
    Map<String, List<String>> ci = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    headers.forEach((k, v) -> {
      if (k != null && v != null) {
        ci.merge(k, v, (a, b) -> {
          List<String> all = new ArrayList<>(a);
          all.addAll(b);
          return all;
        });
      }
    });
    return parse(ci::get, ci.keySet(), now);
  }

  /** Parses the headers of a {@code java.net.http} response. */
  public static RateLimitFields parse(HttpHeaders headers, Instant now) {
    return parse(headers::allValues, headers.map().keySet(), now);
  }

  /** The quota policies advertised, in the order sent. */
  public List<QuotaPolicyItem> policies() {
    return policies;
  }

  /** The service limits reported, in the order sent. */
  public List<ServiceLimitItem> limits() {
    return limits;
  }

  /**
   * The {@code RateLimit-Partition} members, in the order sent (the editor's draft after
   * draft-ietf-httpapi-ratelimit-headers-11); empty when the field is absent.
   */
  public List<PartitionItem> partitions() {
    return partitions;
  }

  /**
   * The dialects that contributed at least one well-formed field. A -08+ {@code RateLimit} with
   * {@code r} and {@code t} is reported as {@link HeaderDialect#IETF} whichever draft the server
   * follows (draft-09 and draft-10 differ only in what {@code t} means); one with {@code a} and
   * {@code w}, and {@code RateLimit-Partition}, as {@link HeaderDialect#IETF_NEXT}, and so is the
   * {@code RateLimit-Policy} that comes with such a {@code RateLimit}.
   */
  public Set<HeaderDialect> dialects() {
    return dialects;
  }

  /**
   * The vendors' own dialects a well-formed field was read in (see {@link VendorDialect}); their
   * limits are in {@link #limits()} with {@link ServiceLimitItem#vendor()} set.
   */
  public Set<VendorDialect> vendors() {
    return vendors;
  }

  /** Retry-After, when present and well-formed. */
  public Optional<RetryAfter> retryAfter() {
    return Optional.ofNullable(retryAfter);
  }

  /** Everything malformed, inconsistent or noteworthy, in the order found. */
  public List<Diagnostic> diagnostics() {
    return diagnostics;
  }

  /** The advertised policy with this identifier (and no partition key, or the first one), if any. */
  public Optional<QuotaPolicyItem> policy(String name) {
    for (QuotaPolicyItem p : policies) {
      if (p.name().filter(name::equals).isPresent()) {
        return Optional.of(p);
      }
    }
    return Optional.empty();
  }

  /**
   * The advertised policy a service limit reports on, if any: the one matcher the client's budgets
   * and {@code headroom check}'s {@code UNKNOWN_POLICY} note share.
   *
   * <p>A named limit (draft-09 sections 4 and 5) is matched by its identifier: a policy of the same
   * name and the same {@code pk} (both absent, or equal bytes) first; otherwise the first policy of
   * the same name where <em>either</em> side has no {@code pk}. {@code pk} is optional on both
   * fields (sections 4.1.4 and 5.1.3), and servers do send it on one only: express-rate-limit's
   * draft-8 mode sends {@code RateLimit-Policy: "10-in-5sec"; q=10; w=5; pk=:...:} with
   * {@code RateLimit: "10-in-5sec"; r=9; t=5}. Two different keys are two partitions and never
   * match. A vendor's named budget ({@link VendorDialect}) is matched the same way, within its
   * dialect. An unnamed limit of an older dialect is matched to the first unnamed policy whose
   * quota it does not contradict ({@code RateLimit-Policy: 10;w=5} with {@code limit=10}).
   */
  public Optional<QuotaPolicyItem> policyOf(ServiceLimitItem limit) {
    Objects.requireNonNull(limit, "limit");
    return Optional.ofNullable(match(policies, limit));
  }

  /** {@link #policyOf}, over the policies parsed so far (the parser's consistency check uses it too). */
  static QuotaPolicyItem match(List<QuotaPolicyItem> policies, ServiceLimitItem limit) {
    String name = limit.name().orElse(null);
    byte[] pk = limit.pkUnsafe();
    QuotaPolicyItem byName = null;
    for (QuotaPolicyItem p : policies) {
      if (name != null) {
        boolean sameNaming = p.dialect() == limit.dialect()
            || (p.dialect().namesPolicies() && limit.dialect().namesPolicies());
        if (!sameNaming || !p.name().filter(name::equals).isPresent()) {
          continue;
        }
        if (p.sameIdentity(name, pk)) {
          return p;
        }
        if (byName == null && (pk == null || p.pkUnsafe() == null)) {
          byName = p;
        }
      } else if (p.name().isEmpty() && !p.dialect().namesPolicies()
          && (limit.limitOrMinus1() < 0 || limit.limitOrMinus1() == p.quota())) {
        return p;
      }
    }
    return byName;
  }

  /** Whether no policy, limit or Retry-After was found. */
  public boolean isEmpty() {
    return policies.isEmpty() && limits.isEmpty() && retryAfter == null;
  }

  @Override
  public String toString() {
    return "RateLimitFields" + dialects + (vendors.isEmpty() ? "" : " vendors=" + vendors) + " policies=" + policies + " limits=" + limits
        + (partitions.isEmpty() ? "" : " partitions=" + partitions)
        + (retryAfter == null ? "" : " " + retryAfter) + " diagnostics=" + diagnostics;
  }
}
