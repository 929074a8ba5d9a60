package dev.headroom.http.body;

import dev.headroom.Decision;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaPolicy;
import dev.headroom.Ticker;
import java.net.URI;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Turns a refused core {@link Decision} into the one body that is RFC 9457 problem details with a
 * draft-09 problem type and a Graceful Boundaries limit-class refusal.
 *
 * <h2>What goes where</h2>
 *
 * <ul>
 *   <li>{@code type}, {@code title}: the {@link ProblemType} (quota-exceeded unless told
 *       otherwise); {@code status}: its recommended status (429, or 503 for reduced capacity).
 *   <li>{@code violated-policies}: every refusing policy, in the decision's order.
 *   <li>{@code retryAfterSeconds}: {@link Decision#retryAfterSeconds()}, the value of the
 *       {@code Retry-After} header; {@code detail} says it in words.
 *   <li>{@code limit}, {@code limitId}, {@code limitType}, {@code scope}, {@code why} and guidance:
 *       from the texts of {@link Decision#mostConstraining()}, the refusing policy with the longest
 *       wait.
 *   <li>{@code windowResetAt}: now (from the injected {@link Ticker}) plus
 *       {@code retryAfterSeconds}, at whole seconds: the same point in time as {@code Retry-After},
 *       as draft-09 section 6 asks of the reset.
 * </ul>
 *
 * <p>A request whose cost exceeds a policy's whole quota can never succeed by waiting
 * ({@link PolicyOutcome#exceedsQuota()}); it is refused with 413 and no retry time.
 *
 * <p>Immutable and thread-safe.
 */
public final class LimitRefusals {

  private final Ticker ticker;
  private final URI origin;
  private final PolicyTexts defaults;
  private final Map<String, PolicyTexts> texts;

  private LimitRefusals(Builder b) {
    this.ticker = b.ticker;
    this.origin = b.origin;
    this.defaults = b.defaults;
    this.texts = Map.copyOf(b.texts);
  }

  /** Starts a configuration. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The texts for a policy: its own; for a plan's policy ({@code api:pro}, see
   * {@code Plans} of headroom-enforcement) without texts of its own, those of its base policy
   * ({@code api}); or the defaults.
   */
  public PolicyTexts texts(QuotaPolicy policy) {
    PolicyTexts t = texts.get(policy.name());
    if (t == null) {
      int plan = policy.name().lastIndexOf(':');
      t = plan > 0 ? texts.get(policy.name().substring(0, plan)) : null;
    }
    return t == null ? defaults : t;
  }

  /** The origin same-origin guidance URLs share, if configured. */
  public Optional<URI> origin() {
    return Optional.ofNullable(origin);
  }

  /** The refusal for a refused decision, as quota-exceeded (429). */
  public Refusal refusal(Decision decision) {
    return refusal(decision, ProblemType.QUOTA_EXCEEDED);
  }

  /**
   * The refusal for a refused decision, as the given problem type.
   *
   * @throws IllegalArgumentException if the decision allowed the request
   */
  public Refusal refusal(Decision decision, ProblemType problemType) {
    Objects.requireNonNull(problemType, "problemType");
    if (decision.allowed()) {
      throw new IllegalArgumentException("decision: expected a refused decision, got an allowed one: " + decision);
    }
    PolicyOutcome worst = decision.mostConstraining();
    for (PolicyOutcome o : decision.violated()) {
      if (o.exceedsQuota()) {
        return tooLarge(decision, o);
      }
    }
    QuotaPolicy policy = worst.policy();
    PolicyTexts t = texts(policy);
    long retry = decision.retryAfterSeconds();
    String limit = t.limit(policy);
    String lead;
    switch (problemType) {
      case TEMPORARY_REDUCED_CAPACITY:
        lead = "The service is temporarily running at reduced capacity; the limit of " + limit + " applies.";
        break;
      case ABNORMAL_USAGE_DETECTED:
        lead = "An unusual pattern of requests was detected; the limit of " + limit + " applies.";
        break;
      default:
        lead = "The limit of " + limit + " has been reached.";
    }
    Instant reset = resetAt(retry);
    Refusal.Builder b = Refusal.builder(problemType.status())
        .type(problemType)
        .detail(lead + " Try again in " + seconds(retry) + ".")
        .error(t.error().orElse(problemType.error()))
        .why(t.why())
        .limit(limit)
        .retryAfterSeconds(retry)
        .limitId(t.limitId(policy))
        .limitType(t.limitType(policy))
        .scope(LimitScope.of(policy).token())
        .windowResetAt(reset)
        .violatedPolicies(names(decision))
        .origin(origin);
    t.cachedResultUrl().ifPresent(b::cachedResultUrl);
    t.alternativeEndpoint().ifPresent(b::alternativeEndpoint);
    t.upgradeUrl().ifPresent(b::upgradeUrl);
    t.humanUrl().ifPresent(b::humanUrl);
    return b.build();
  }

  /**
   * A 429 abnormal-usage-detected (draft-09 section 5.3) for a partition that kept sending while
   * told to wait and is now blocked for {@code waitSeconds} ({@code Escalations} of headroom-enforcement):
   * the limit, why and guidance of the policy as enforced, {@code violated-policies} as given.
   */
  public Refusal abnormal(QuotaPolicy enforced, long waitSeconds, List<String> violated) {
    PolicyTexts t = texts(enforced);
    String limit = t.limit(enforced);
    Refusal.Builder b = Refusal.builder(ProblemType.ABNORMAL_USAGE_DETECTED.status())
        .type(ProblemType.ABNORMAL_USAGE_DETECTED)
        .detail("Requests kept arriving while this client was asked to wait, so it is blocked; the limit of "
            + limit + " applies. Try again in " + seconds(waitSeconds) + ". Requests during the block do not shorten it.")
        .error(ProblemType.ABNORMAL_USAGE_DETECTED.error())
        .why(t.why())
        .limit(limit)
        .retryAfterSeconds(waitSeconds)
        .limitId(t.limitId(enforced))
        .limitType(t.limitType(enforced))
        .scope(LimitScope.of(enforced).token())
        .windowResetAt(resetAt(waitSeconds))
        .violatedPolicies(violated)
        .origin(origin);
    t.alternativeEndpoint().ifPresent(b::alternativeEndpoint);
    t.upgradeUrl().ifPresent(b::upgradeUrl);
    t.humanUrl().ifPresent(b::humanUrl);
    return b.build();
  }

  /**
   * The refusal as it agrees with the Retry-After actually written, which jitter (draft-09 section
   * 8.5) or an escalation may have moved later than the decision's: {@code retryAfterSeconds}, the
   * reset instant and the "Try again in" sentence of the detail move with it (draft-09 section 6:
   * they reference the same moment). A refusal without a wait, or with this one, is returned as is.
   */
  public Refusal agreeing(Refusal refusal, long retryAfterSeconds) {
    if (refusal.retryAfterSeconds().isEmpty() || refusal.retryAfterSeconds().getAsLong() == retryAfterSeconds) {
      return refusal;
    }
    long decided = refusal.retryAfterSeconds().getAsLong();
    Refusal.Builder b = refusal.toBuilder().retryAfterSeconds(retryAfterSeconds).windowResetAt(resetAt(retryAfterSeconds));
    String sentence = "Try again in " + seconds(decided) + ".";
    refusal.detail().filter(d -> d.contains(sentence)).ifPresent(d ->
        b.detail(d.replace(sentence, "Try again in " + seconds(retryAfterSeconds) + ".")));
    return b.build();
  }

  /** Now plus {@code seconds}, rounded up to a whole second: the instant a Retry-After written now names. */
  private Instant resetAt(long seconds) {
    Instant now = ticker.instant();
    return now.plusSeconds(seconds).plusNanos(now.getNano() == 0 ? 0 : 1_000_000_000L - now.getNano());
  }

  private Refusal tooLarge(Decision decision, PolicyOutcome o) {
    QuotaPolicy policy = o.policy();
    PolicyTexts t = texts(policy);
    String limit = t.limit(policy);
    Refusal.Builder b = Refusal.builder(413)
        .detail("This request costs " + o.cost() + " " + policy.unit().token() + ", more than the whole limit of "
            + limit + "; it cannot succeed by waiting. Send a smaller request.")
        .error("request_exceeds_limit")
        .why(t.why())
        .limit(limit)
        .limitId(t.limitId(policy))
        .limitType(t.limitType(policy))
        .scope(LimitScope.of(policy).token())
        .violatedPolicies(names(decision))
        .origin(origin);
    t.alternativeEndpoint().ifPresent(b::alternativeEndpoint);
    t.upgradeUrl().ifPresent(b::upgradeUrl);
    t.humanUrl().ifPresent(b::humanUrl);
    return b.build();
  }

  private static List<String> names(Decision decision) {
    List<String> names = new ArrayList<>(decision.violated().size());
    for (PolicyOutcome o : decision.violated()) {
      if (!names.contains(o.policy().name())) {
        names.add(o.policy().name());
      }
    }
    return names;
  }

  static String seconds(long n) {
    return n == 1 ? "1 second" : n + " seconds";
  }

  /** Builds {@link LimitRefusals}. Not thread-safe. */
  public static final class Builder {
    private Ticker ticker;
    private URI origin;
    private PolicyTexts defaults;
    private final Map<String, PolicyTexts> texts = new HashMap<>();
    private final List<String[]> speakingAs = new ArrayList<>();

    private Builder() {}

    /**
     * The refusals of {@code policyName} speak with the texts of {@code basePolicyName} and, when
     * {@code upgradeUrl} is not null, point there as {@code upgradeUrl} (Graceful Boundaries
     * section 3), unless texts of its own were given: how a plan's policy ({@code api:pro}) speaks
     * as its base policy ({@code api}) and points at the next plan's page ({@code Plans} says which).
     */
    public Builder textsOf(String policyName, String basePolicyName, String upgradeUrl) {
      speakingAs.add(new String[] {Objects.requireNonNull(policyName, "policyName"),
          Objects.requireNonNull(basePolicyName, "basePolicyName"), upgradeUrl});
      return this;
    }

    /** Required: the clock {@code windowResetAt} is computed from. */
    public Builder ticker(Ticker ticker) {
      this.ticker = ticker;
      return this;
    }

    /**
     * The service's origin, such as {@code https://api.example.com}: guidance URLs may then be
     * absolute on this origin as well as relative (SC-6).
     */
    public Builder origin(URI origin) {
      this.origin = origin;
      return this;
    }

    /** Required: the texts for every policy without texts of its own. */
    public Builder defaults(PolicyTexts defaults) {
      this.defaults = defaults;
      return this;
    }

    /** The texts for one policy, by name. */
    public Builder texts(String policyName, PolicyTexts texts) {
      this.texts.put(Objects.requireNonNull(policyName, "policyName"), Objects.requireNonNull(texts, "texts"));
      return this;
    }

    /**
     * Validates and builds: every text's guidance URLs are checked against the origin (SC-6).
     *
     * @throws IllegalArgumentException naming the policy, the field and the value
     */
    public LimitRefusals build() {
      if (ticker == null) {
        throw new IllegalArgumentException("ticker: required, the clock windowResetAt is computed from; got nothing");
      }
      if (defaults == null) {
        throw new IllegalArgumentException("defaults: required, the texts (at least why) for policies without their own; got nothing");
      }
      for (String[] as : speakingAs) {
        PolicyTexts base = texts.getOrDefault(as[1], defaults);
        if (!texts.containsKey(as[0])) {
          texts.put(as[0], as[2] == null ? base : base.toBuilder().upgradeUrl(as[2]).build());
        }
      }
      URI o = OperatorTextChecks.origin("origin", origin);
      check("defaults", defaults, o);
      texts.forEach((name, t) -> check("texts for policy '" + name + "'", t, o));
      return new LimitRefusals(this);
    }

    private static void check(String where, PolicyTexts t, URI origin) {
      OperatorTextChecks.url(where + ": cachedResultUrl", t.cachedResultUrl().orElse(null), true, origin);
      OperatorTextChecks.url(where + ": alternativeEndpoint", t.alternativeEndpoint().orElse(null), true, origin);
    }
  }
}
