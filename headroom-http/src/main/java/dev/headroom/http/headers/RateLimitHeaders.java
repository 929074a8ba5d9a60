package dev.headroom.http.headers;

import dev.headroom.Decision;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaPolicy;
import dev.headroom.Ticker;
import dev.headroom.http.HeaderNames;
import dev.headroom.http.PartitionKeyExposure;
import dev.headroom.http.RetryAfter;
import dev.headroom.http.sf.StructuredFields;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BiConsumer;
import java.util.random.RandomGenerator;

/**
 * Writes the rate-limit fields of one response, in the dialects a route chose, from the
 * {@link Decision} the store made. Any server can use it: the fields go to a sink that adds one
 * header line ({@code (name, value) -> response.addHeader(name, value)}).
 *
 * <pre>{@code
 * RateLimitHeaders headers = RateLimitHeaders.builder()
 *     .dialects(HeaderDialect.IETF, HeaderDialect.X_RATELIMIT)
 *     .exposure(pkExposure)
 *     .jitter(Duration.ofSeconds(5), new SplittableRandom(seed))
 *     .policies(routePolicies)
 *     .build();
 * Optional<Duration> retryAfter = headers.write(decision, 429, response::addHeader);
 * }</pre>
 *
 * <h2>What {@code t} says</h2>
 * {@link HeaderDialect#IETF} and {@link HeaderDialect#IETF_NEXT} send the time until more quota is
 * available ({@link PolicyOutcome#nextQuota()}, draft-ietf-httpapi-ratelimit-headers-10 and -11
 * section 4.1.2); {@link HeaderDialect#DRAFT_09} and the dialects before it send the time until the
 * quota resets ({@link PolicyOutcome#reset()}, draft-09 section 4.1.2).
 *
 * <h2>Server rules (draft-ietf-httpapi-ratelimit-headers-09 to -11, sections 6 and 8)</h2>
 * <ul>
 * <li>On a refusal, {@code Retry-After} is written (unless {@link Builder#retryAfter(boolean)} is
 *   off). Under draft-09 the {@code t} of every violated policy is that same number of seconds:
 *   the two reference the same moment (draft-09 section 6). Under draft-10 and later, Retry-After
 *   "SHOULD NOT reference a point in time earlier than" {@code t} (section 6): a violated policy
 *   sends its own time until more quota, which is Retry-After itself when the request asked for one
 *   unit, and earlier when it asked for more than will come back first.
 * <li>{@link HeaderDialect#IETF_NEXT} adds {@code c}, what the request cost (0 when it was refused:
 *   nothing was consumed), for requests whose cost is not 1, and a {@code RateLimit-Partition}
 *   member for each policy whose partitioning it can name (see {@link PolicyFormat#partition}).
 * <li>Optional jitter (section 8.5): one draw per response, from zero to the configured maximum
 *   whole seconds, added to every {@code t} and to {@code Retry-After} alike, so clients told to
 *   come back at the same moment spread out, never earlier than the quota allows.
 * <li>Optional cap on the remaining/reset ratio (sections 6 and 8.5): for policies whose window is
 *   at least the configured minimum, {@code r} is lowered so that {@code r} over the time until the
 *   quota resets does not exceed {@code factor * q / w}, the policy's nominal throughput; it stays at
 *   least 1 while any unit remains. The same {@code r} goes out in every dialect: the draft-10
 *   {@code t} is the wait for the next unit, not a horizon to spread {@code r} over, and capping
 *   against it would hold back quota the policy grants.
 * <li>Optional "near exhaustion only" threshold (section 6.2): the RateLimit fields are written
 *   only when some policy's utilisation reaches the threshold, or the request was refused.
 * <li>Optional omission on 3xx (section 6): a low {@code r} on a redirect can stall the client.
 * </ul>
 *
 * <h2>Performance</h2>
 * The constant part of each policy's fields ({@code "name";q=100;w=60} and {@code "name";r=}) is
 * serialised once per policy and cached; a response appends only numbers and the {@code pk}. The
 * result is byte-identical to serialising the whole List with {@link StructuredFields}
 * ({@code RateLimitHeadersFastPathPropertyTest}).
 *
 * <p>Immutable and thread-safe, provided the {@link RandomGenerator} given for jitter is (it is
 * used under a lock) and the {@link PartitionKeyExposure} is.
 */
public final class RateLimitHeaders {

  /** Most policies whose serialised prefix is cached; beyond this they are serialised per response. */
  static final int MAX_CACHED_POLICIES = 1024;

  /** Longest jitter accepted: an hour is already far beyond any useful spread. */
  public static final Duration MAX_JITTER = Duration.ofHours(1);

  /** How X-RateLimit-Reset is written. */
  public enum XRateLimitReset {
    /** Seconds until the reset, like {@code t}. */
    DELTA_SECONDS,
    /** Unix epoch seconds of the reset, computed from the injected {@link Ticker}. */
    EPOCH_SECONDS
  }

  private final Set<HeaderDialect> dialects;
  private final PartitionKeyExposure exposure;
  private final long maxJitterSeconds;
  private final RandomGenerator random;
  private final XRateLimitReset xReset;
  private final Ticker ticker;
  private final double ratioCapFactor;
  private final long ratioCapMinWindowSeconds;
  private final double nearExhaustion;
  private final boolean omitOnRedirect;
  private final boolean writeRetryAfter;
  /** Whether a dialect sends {@code t} as the time until more quota is available. */
  private final boolean moreQuota;
  private final Map<QuotaPolicy, PolicyFormat> formats = new ConcurrentHashMap<>();

  /** Most of the configured policies found by identity before the map is asked. */
  private static final int KNOWN_BY_IDENTITY = 8;

  /**
   * The first configured policies and their formats: a decision's outcomes usually carry these
   * very instances, found by comparing references, where the map hashes and compares fields.
   */
  private final QuotaPolicy[] known;
  private final PolicyFormat[] knownFormats;

  private RateLimitHeaders(Builder b) {
    this.dialects = b.dialects;
    this.exposure = b.exposure;
    this.maxJitterSeconds = b.jitter.getSeconds();
    this.random = b.random;
    this.xReset = b.xReset;
    this.ticker = b.ticker;
    this.ratioCapFactor = b.ratioCapFactor;
    this.ratioCapMinWindowSeconds = b.ratioCapMinWindow.getSeconds();
    this.nearExhaustion = b.nearExhaustion;
    this.omitOnRedirect = b.omitOnRedirect;
    this.writeRetryAfter = b.writeRetryAfter;
    this.moreQuota = dialects.stream().anyMatch(HeaderDialect::tUntilMoreQuota);
    for (QuotaPolicy p : b.policies) {
      format(p);
    }
    QuotaPolicy[] first = b.policies.stream().distinct().limit(KNOWN_BY_IDENTITY).toArray(QuotaPolicy[]::new);
    PolicyFormat[] firstFormats = new PolicyFormat[first.length];
    for (int i = 0; i < first.length; i++) {
      firstFormats[i] = format(first[i]); // from the map: `known` is still null here
    }
    this.knownFormats = firstFormats;
    this.known = first;
  }

  /** Starts a configuration: {@link HeaderDialect#IETF} only, no pk, no jitter, no cap, every status. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Whether the fields written for a decision depend on nothing but each policy's remaining
   * units, reset, time until more quota and cost, the decision's Retry-After, the status and the
   * second they are written in:
   * no {@code pk} can be sent ({@link PartitionKeyExposure#mayExpose()}) and no jitter is drawn.
   * A server may then reuse what it wrote for one decision for another with the same numbers in
   * the same second (the gateway does, for refusals).
   */
  public boolean numbersOnly() {
    return maxJitterSeconds == 0 && !exposure.mayExpose();
  }

  /** The dialects written, in {@link HeaderDialect} order. */
  public Set<HeaderDialect> dialects() {
    return dialects;
  }

  /**
   * Writes the fields for a decision.
   *
   * @param decision every policy's outcome for the request
   * @param status the response status code; 3xx may omit the fields
   * @param sink adds one header line; called once per field
   * @return the Retry-After the fields agree with (jitter included) when the decision refused the
   *     request, written to the sink unless {@link Builder#retryAfter(boolean)} is off; a refusal
   *     body's {@code retryAfterSeconds} should use this value
   */
  public Optional<Duration> write(Decision decision, int status, BiConsumer<String, String> sink) {
    Objects.requireNonNull(decision, "decision");
    Objects.requireNonNull(sink, "sink");
    long jitter = drawJitter();
    long retryAfter = decision.allowed() ? -1 : decision.retryAfterSeconds() + jitter;
    if (retryAfter >= 0 && writeRetryAfter) {
      sink.accept(HeaderNames.RETRY_AFTER, Long.toString(retryAfter));
    }
    Optional<Duration> result = retryAfter >= 0 ? Optional.of(Duration.ofSeconds(retryAfter)) : Optional.empty();
    if (omitOnRedirect && status >= 300 && status < 400) {
      return result;
    }
    List<PolicyOutcome> outcomes = decision.outcomes();
    if (nearExhaustion > 0 && decision.allowed() && !nearExhaustion(outcomes)) {
      return result;
    }
    int n = outcomes.size();
    long[] r = new long[n];
    long[] t = new long[n]; // until the quota resets: draft-09 and every dialect before it
    long[] next = moreQuota ? new long[n] : null; // until more quota is available: draft-10 and later
    int most = 0;
    PolicyOutcome mostConstraining = decision.mostConstraining();
    for (int i = 0; i < n; i++) {
      PolicyOutcome o = outcomes.get(i);
      if (o == mostConstraining) {
        most = i;
      }
      boolean violated = !o.allowed() && retryAfter >= 0;
      t[i] = violated ? retryAfter : o.resetSeconds() + jitter;
      r[i] = capRemaining(o.policy(), o.remaining(), t[i]);
      if (next != null) {
        long more = o.nextQuotaSeconds() + jitter;
        next[i] = violated ? Math.min(retryAfter, more) : more;
      }
    }
    for (HeaderDialect d : dialects) {
      switch (d) {
        case IETF:
          writeIetf(outcomes, r, next, sink);
          break;
        case IETF_NEXT:
          writeNext(outcomes, decision.allowed(), r, next, sink);
          break;
        case DRAFT_09:
          writeIetf(outcomes, r, t, sink);
          break;
        case DRAFT_07: {
          PolicyOutcome o = outcomes.get(most);
          sink.accept(HeaderNames.RATELIMIT, "limit=" + sfInteger(o.policy().quota()) + ", remaining=" + r[most] + ", reset=" + t[most]);
          sink.accept(HeaderNames.RATELIMIT_POLICY, legacyPolicies(outcomes, -1));
          break;
        }
        case DRAFT_06: {
          PolicyOutcome o = outcomes.get(most);
          sink.accept(HeaderNames.RATELIMIT_LIMIT, Long.toString(sfInteger(o.policy().quota())));
          sink.accept(HeaderNames.RATELIMIT_REMAINING, Long.toString(r[most]));
          sink.accept(HeaderNames.RATELIMIT_RESET, Long.toString(t[most]));
          sink.accept(HeaderNames.RATELIMIT_POLICY, legacyPolicies(outcomes, -1));
          break;
        }
        case DRAFT_03: {
          PolicyOutcome o = outcomes.get(most);
          sink.accept(HeaderNames.RATELIMIT_LIMIT, legacyPolicies(outcomes, sfInteger(o.policy().quota())));
          sink.accept(HeaderNames.RATELIMIT_REMAINING, Long.toString(r[most]));
          sink.accept(HeaderNames.RATELIMIT_RESET, Long.toString(t[most]));
          break;
        }
        case X_RATELIMIT: {
          PolicyOutcome o = outcomes.get(most);
          sink.accept(HeaderNames.X_RATELIMIT_LIMIT, Long.toString(sfInteger(o.policy().quota())));
          sink.accept(HeaderNames.X_RATELIMIT_REMAINING, Long.toString(r[most]));
          sink.accept(HeaderNames.X_RATELIMIT_RESET, Long.toString(xReset(t[most])));
          break;
        }
        default:
          throw new AssertionError(d);
      }
    }
    return result;
  }

  /**
   * Writes given policies and limits as they are, in the configured dialects: for relaying or
   * re-emitting what was parsed, and for servers that compute the values themselves. No jitter or
   * cap is applied; the 3xx rule is. Dialects before -08 report the first limit, with its
   * {@link ServiceLimitItem#limit()} or else the quota of the policy it names.
   *
   * @param retryAfter written as Retry-After when present (and {@link Builder#retryAfter(boolean)} is on)
   */
  public void write(List<QuotaPolicyItem> policies, List<ServiceLimitItem> limits, Optional<Duration> retryAfter,
      int status, BiConsumer<String, String> sink) {
    Objects.requireNonNull(policies, "policies");
    Objects.requireNonNull(limits, "limits");
    Objects.requireNonNull(sink, "sink");
    if (retryAfter.isPresent() && writeRetryAfter) {
      sink.accept(HeaderNames.RETRY_AFTER, RetryAfter.formatDelaySeconds(retryAfter.get()));
    }
    if (omitOnRedirect && status >= 300 && status < 400) {
      return;
    }
    ServiceLimitItem first = limits.isEmpty() ? null : limits.get(0);
    long firstLimit = first == null ? -1 : first.limitOrMinus1();
    if (first != null && firstLimit < 0 && first.name().isPresent()) {
      for (QuotaPolicyItem p : policies) {
        if (p.name().equals(first.name())) {
          firstLimit = p.quota();
          break;
        }
      }
    }
    for (HeaderDialect d : dialects) {
      switch (d) {
        case IETF: case DRAFT_09: case IETF_NEXT: {
          String r = d == HeaderDialect.IETF_NEXT ? ";a=" : ";r=";
          String t = d == HeaderDialect.IETF_NEXT ? ";w=" : ";t=";
          StringBuilder pol = new StringBuilder();
          for (QuotaPolicyItem p : policies) {
            sep(pol);
            pol.append(new PolicyFormat(p.name().orElse("default"), p.quota(), p.unit(), p.windowSecondsOrZero()).ietfPolicy);
            appendPk(pol, p.pkUnsafe());
          }
          emit(sink, HeaderNames.RATELIMIT_POLICY, pol);
          StringBuilder lim = new StringBuilder();
          for (ServiceLimitItem l : limits) {
            sep(lim);
            StructuredFields.appendString(lim, l.name().orElse("default"));
            if (l.remainingOrMinus1() >= 0) {
              lim.append(r).append(l.remainingOrMinus1());
            }
            if (l.resetOrMinus1() >= 0) {
              lim.append(t).append(l.resetOrMinus1());
            }
            if (d == HeaderDialect.IETF_NEXT && l.cost().isPresent()) {
              lim.append(";c=").append(l.cost().getAsLong());
            }
            appendPk(lim, l.pkUnsafe());
          }
          emit(sink, HeaderNames.RATELIMIT, lim);
          break;
        }
        case DRAFT_07: {
          if (first != null) {
            StringBuilder sb = new StringBuilder();
            appendDictMember(sb, "limit", firstLimit);
            appendDictMember(sb, "remaining", first.remainingOrMinus1());
            appendDictMember(sb, "reset", first.resetOrMinus1());
            emit(sink, HeaderNames.RATELIMIT, sb);
          }
          emit(sink, HeaderNames.RATELIMIT_POLICY, legacyPolicyItems(policies, -1));
          break;
        }
        case DRAFT_06:
          if (firstLimit >= 0) {
            sink.accept(HeaderNames.RATELIMIT_LIMIT, Long.toString(firstLimit));
          }
          writeRemainingReset(first, HeaderNames.RATELIMIT_REMAINING, HeaderNames.RATELIMIT_RESET, sink);
          emit(sink, HeaderNames.RATELIMIT_POLICY, legacyPolicyItems(policies, -1));
          break;
        case DRAFT_03:
          if (firstLimit >= 0) {
            emit(sink, HeaderNames.RATELIMIT_LIMIT, legacyPolicyItems(policies, firstLimit));
          }
          writeRemainingReset(first, HeaderNames.RATELIMIT_REMAINING, HeaderNames.RATELIMIT_RESET, sink);
          break;
        case X_RATELIMIT:
          if (firstLimit >= 0) {
            sink.accept(HeaderNames.X_RATELIMIT_LIMIT, Long.toString(firstLimit));
          }
          if (first != null && first.remainingOrMinus1() >= 0) {
            sink.accept(HeaderNames.X_RATELIMIT_REMAINING, Long.toString(first.remainingOrMinus1()));
          }
          if (first != null && first.resetOrMinus1() >= 0) {
            sink.accept(HeaderNames.X_RATELIMIT_RESET, Long.toString(xReset(first.resetOrMinus1())));
          }
          break;
        default:
          throw new AssertionError(d);
      }
    }
  }

  // ---- the hot path

  private void writeIetf(List<PolicyOutcome> outcomes, long[] r, long[] t, BiConsumer<String, String> sink) {
    int n = outcomes.size();
    if (n == 1) {
      // one policy, the usual case: its policy item is a cached string when there is no pk
      PolicyOutcome o = outcomes.get(0);
      PolicyFormat f = format(o.policy());
      byte[] pk = exposure.pk(o.policy(), o.key()).orElse(null);
      if (pk == null) {
        sink.accept(HeaderNames.RATELIMIT_POLICY, f.ietfPolicy);
        sink.accept(HeaderNames.RATELIMIT, f.ietfLimitPrefix + r[0] + ";t=" + t[0]);
        return;
      }
    }
    StringBuilder pol = new StringBuilder(48 * n);
    StringBuilder lim = new StringBuilder(40 * n);
    for (int i = 0; i < n; i++) {
      PolicyOutcome o = outcomes.get(i);
      PolicyFormat f = format(o.policy());
      byte[] pk = exposure.pk(o.policy(), o.key()).orElse(null);
      if (i > 0) {
        pol.append(", ");
        lim.append(", ");
      }
      pol.append(f.ietfPolicy);
      appendPk(pol, pk);
      lim.append(f.ietfLimitPrefix).append(r[i]).append(";t=").append(t[i]);
      appendPk(lim, pk);
    }
    sink.accept(HeaderNames.RATELIMIT_POLICY, pol.toString());
    sink.accept(HeaderNames.RATELIMIT, lim.toString());
  }

  /**
   * The editor's draft after -11: {@code a} and {@code w} for {@code r} and {@code t}, {@code c}
   * when the request's cost is not 1, and {@code RateLimit-Partition} for the policies whose
   * partitioning it can name.
   */
  private void writeNext(List<PolicyOutcome> outcomes, boolean allowed, long[] a, long[] w,
      BiConsumer<String, String> sink) {
    int n = outcomes.size();
    StringBuilder pol = new StringBuilder(48 * n);
    StringBuilder lim = new StringBuilder(48 * n);
    StringBuilder part = null;
    for (int i = 0; i < n; i++) {
      PolicyOutcome o = outcomes.get(i);
      PolicyFormat f = format(o.policy());
      byte[] pk = exposure.pk(o.policy(), o.key()).orElse(null);
      sep(pol);
      pol.append(f.ietfPolicy);
      appendPk(pol, pk);
      sep(lim);
      lim.append(f.nextLimitPrefix).append(a[i]).append(";w=").append(w[i]);
      if (o.cost() != 1) {
        lim.append(";c=").append(allowed ? sfInteger(o.cost()) : 0);
      }
      appendPk(lim, pk);
      if (f.partition != null) {
        part = part == null ? new StringBuilder() : part.append(", ");
        part.append(f.partition);
      }
    }
    sink.accept(HeaderNames.RATELIMIT_POLICY, pol.toString());
    sink.accept(HeaderNames.RATELIMIT, lim.toString());
    if (part != null) {
      sink.accept(HeaderNames.RATELIMIT_PARTITION, part.toString());
    }
  }

  private PolicyFormat format(QuotaPolicy p) {
    QuotaPolicy[] k = known;
    if (k != null) { // null while the constructor fills the map
      for (int i = 0; i < k.length; i++) {
        if (k[i] == p) {
          return knownFormats[i];
        }
      }
    }
    PolicyFormat f = formats.get(p);
    if (f != null) {
      return f;
    }
    f = PolicyFormat.of(p);
    if (formats.size() < MAX_CACHED_POLICIES) {
      formats.putIfAbsent(p, f);
    }
    return f;
  }

  private String legacyPolicies(List<PolicyOutcome> outcomes, long expiringLimit) {
    StringBuilder sb = new StringBuilder(16 * (outcomes.size() + 1));
    if (expiringLimit >= 0) {
      sb.append(expiringLimit);
    }
    for (PolicyOutcome o : outcomes) {
      sep(sb);
      sb.append(format(o.policy()).legacyPolicy);
    }
    return sb.toString();
  }

  /**
   * A value as a Structured Fields Integer: core quotas go up to 2^50, beyond the largest Integer
   * (RFC 9651 section 3.3.1, 999,999,999,999,999), so larger values are reported as that largest
   * Integer, which is effectively unlimited.
   */
  static long sfInteger(long value) {
    return Math.min(value, QuotaPolicyItem.MAX_INTEGER);
  }

  private long capRemaining(QuotaPolicy p, long r, long t) {
    r = sfInteger(r);
    if (ratioCapFactor <= 0 || r <= 1 || t <= 0 || p.windowSeconds() < ratioCapMinWindowSeconds) {
      return r;
    }
    double max = Math.floor(ratioCapFactor * (double) p.quota() * t / p.windowSeconds());
    if (r <= max) {
      return r;
    }
    return Math.max(1, (long) max);
  }

  private boolean nearExhaustion(List<PolicyOutcome> outcomes) {
    for (PolicyOutcome o : outcomes) {
      if (o.utilisation() >= nearExhaustion) {
        return true;
      }
    }
    return false;
  }

  private long drawJitter() {
    if (maxJitterSeconds == 0) {
      return 0;
    }
    if (random == null) {
      return ThreadLocalRandom.current().nextLong(maxJitterSeconds + 1);
    }
    synchronized (random) {
      return random.nextLong(maxJitterSeconds + 1);
    }
  }

  private long xReset(long t) {
    if (xReset == XRateLimitReset.DELTA_SECONDS) {
      return t;
    }
    return Math.floorDiv(ticker.read(), 1_000_000_000L) + t;
  }

  // ---- small serialisation helpers

  private static String legacyPolicyItems(List<QuotaPolicyItem> policies, long expiringLimit) {
    StringBuilder sb = new StringBuilder();
    if (expiringLimit >= 0) {
      sb.append(expiringLimit);
    }
    for (QuotaPolicyItem p : policies) {
      sep(sb);
      sb.append(p.quota());
      if (p.windowSecondsOrZero() > 0) {
        sb.append(";w=").append(p.windowSecondsOrZero());
      }
    }
    return sb.toString();
  }

  private static void writeRemainingReset(ServiceLimitItem l, String remaining, String reset, BiConsumer<String, String> sink) {
    if (l != null && l.remainingOrMinus1() >= 0) {
      sink.accept(remaining, Long.toString(l.remainingOrMinus1()));
    }
    if (l != null && l.resetOrMinus1() >= 0) {
      sink.accept(reset, Long.toString(l.resetOrMinus1()));
    }
  }

  private static void appendDictMember(StringBuilder sb, String key, long value) {
    if (value >= 0) {
      sep(sb);
      sb.append(key).append('=').append(value);
    }
  }

  private static void appendPk(StringBuilder sb, byte[] pk) {
    if (pk != null) {
      StructuredFields.appendByteSequence(sb.append(";pk="), pk);
    }
  }

  private static void sep(StringBuilder sb) {
    if (sb.length() > 0) {
      sb.append(", ");
    }
  }

  private static void emit(BiConsumer<String, String> sink, String name, CharSequence value) {
    if (value.length() > 0) {
      sink.accept(name, value.toString());
    }
  }

  /** Configures a {@link RateLimitHeaders}; {@link #build()} validates the combination. */
  public static final class Builder {
    private Set<HeaderDialect> dialects = EnumSet.of(HeaderDialect.IETF);
    private PartitionKeyExposure exposure = PartitionKeyExposure.off();
    private Duration jitter = Duration.ZERO;
    private RandomGenerator random;
    private XRateLimitReset xReset = XRateLimitReset.DELTA_SECONDS;
    private Ticker ticker = Ticker.system();
    private double ratioCapFactor;
    private Duration ratioCapMinWindow = Duration.ZERO;
    private double nearExhaustion;
    private boolean omitOnRedirect;
    private boolean writeRetryAfter = true;
    private final List<QuotaPolicy> policies = new ArrayList<>();

    private Builder() {}

    /** The dialects to write; {@link HeaderDialect#IETF} by default. */
    public Builder dialects(HeaderDialect... dialects) {
      return dialects(dialects == null ? null : Arrays.asList(dialects));
    }

    /** The dialects to write; {@link HeaderDialect#IETF} by default. */
    public Builder dialects(Collection<HeaderDialect> dialects) {
      if (dialects == null || dialects.isEmpty() || dialects.stream().anyMatch(Objects::isNull)) {
        throw new IllegalArgumentException("dialects: expected at least one of " + HeaderDialect.NAMES + ", got "
            + dialects);
      }
      this.dialects = EnumSet.copyOf(dialects);
      return this;
    }

    /** What is sent as {@code pk} (the dialects from draft-08 on); nothing by default. */
    public Builder exposure(PartitionKeyExposure exposure) {
      this.exposure = Objects.requireNonNull(exposure, "exposure");
      return this;
    }

    /**
     * Adds zero to {@code max} whole seconds, drawn once per response, to every {@code t} and to
     * Retry-After (draft-09 section 8.5). Draws from {@link ThreadLocalRandom}.
     */
    public Builder jitter(Duration max) {
      return jitter(max, null);
    }

    /** As {@link #jitter(Duration)}, drawing from {@code random} (seed it for reproducible tests). */
    public Builder jitter(Duration max, RandomGenerator random) {
      if (max == null || max.isNegative() || max.getNano() != 0 || max.compareTo(MAX_JITTER) > 0) {
        throw new IllegalArgumentException("jitter: expected a whole number of seconds from 0 to "
            + MAX_JITTER.getSeconds() + ", got " + max);
      }
      this.jitter = max;
      this.random = random;
      return this;
    }

    /** How X-RateLimit-Reset is written; delta seconds by default. */
    public Builder xRateLimitReset(XRateLimitReset style) {
      this.xReset = Objects.requireNonNull(style, "xRateLimitReset");
      return this;
    }

    /** The clock for epoch-seconds X-RateLimit-Reset; {@link Ticker#system()} by default. */
    public Builder ticker(Ticker ticker) {
      this.ticker = Objects.requireNonNull(ticker, "ticker");
      return this;
    }

    /**
     * Caps {@code r / t} at {@code factor} times the policy's nominal throughput {@code q / w}, for
     * policies whose window is at least {@code minWindow} (draft-09 sections 6 and 8.5). Off by default.
     */
    public Builder capRemainingToResetRatio(double factor, Duration minWindow) {
      if (!(factor >= 1.0) || Double.isInfinite(factor)) {
        throw new IllegalArgumentException("capRemainingToResetRatio.factor: expected a finite number of at least 1 "
            + "(1 = the policy's nominal throughput q/w), got " + factor);
      }
      if (minWindow == null || minWindow.isNegative()) {
        throw new IllegalArgumentException("capRemainingToResetRatio.minWindow: expected zero or more, got " + minWindow);
      }
      this.ratioCapFactor = factor;
      this.ratioCapMinWindow = minWindow;
      return this;
    }

    /**
     * Writes the RateLimit fields only when a policy's utilisation (1 - r/q) is at least
     * {@code threshold}, or the request was refused (draft-09 section 6.2). Off by default.
     */
    public Builder onlyNearExhaustion(double threshold) {
      if (!(threshold > 0 && threshold <= 1)) {
        throw new IllegalArgumentException("onlyNearExhaustion.threshold: expected a share above 0 and at most 1, got " + threshold);
      }
      this.nearExhaustion = threshold;
      return this;
    }

    /** Leaves the RateLimit fields off 3xx responses (draft-09 section 6). Off by default. */
    public Builder omitOnRedirect(boolean omit) {
      this.omitOnRedirect = omit;
      return this;
    }

    /** Whether refusals get a Retry-After field from here; on by default. */
    public Builder retryAfter(boolean write) {
      this.writeRetryAfter = write;
      return this;
    }

    /** A route's policies, serialised at build time so that even the first response is fast. */
    public Builder policies(Collection<QuotaPolicy> policies) {
      for (QuotaPolicy p : policies) {
        this.policies.add(Objects.requireNonNull(p, "policies: null element"));
      }
      return this;
    }

    /**
     * @throws IllegalArgumentException when two dialects write the same field in different forms
     *     (the -07 Dictionary and the -08+ List of {@code RateLimit}, for example)
     */
    public RateLimitHeaders build() {
      for (HeaderDialect a : dialects) {
        for (HeaderDialect b : dialects) {
          if (a.ordinal() < b.ordinal()) {
            SortedSet<String> shared = new TreeSet<>(a.fieldNames());
            shared.retainAll(b.fieldNames());
            if (!shared.isEmpty()) {
              throw new IllegalArgumentException("dialects: " + a.token() + " and " + b.token()
                  + " both write " + String.join(", ", shared) + " in different forms and cannot be sent together; "
                  + "choose one of them (x-ratelimit combines with any)");
            }
          }
        }
      }
      if (policies.size() > MAX_CACHED_POLICIES) {
        throw new IllegalArgumentException("policies: expected at most " + MAX_CACHED_POLICIES + ", got " + policies.size());
      }
      return new RateLimitHeaders(this);
    }
  }
}
