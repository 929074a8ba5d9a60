package dev.headroom.enforcement.settings;

import dev.headroom.QuotaPolicy;
import dev.headroom.Ticker;
import dev.headroom.enforcement.Escalation;
import dev.headroom.enforcement.Waiting;
import dev.headroom.enforcement.partition.AllowList;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.PolicyTexts;
import java.net.URI;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The policies of one configuration and everything said and enforced about them, as
 * {@link SettingsReader#policies} read them: every value valid. Immutable.
 *
 * @param policies by name, in the order declared
 * @param defaults the texts of a policy without texts of its own (the service's why)
 * @param texts the texts of the policies that have their own, by name
 * @param escalations by policy name, for the policies that escalate
 * @param allowLists by policy name, for the policies some callers bypass
 * @param origin the service's origin, which guidance URLs may be absolute on
 * @param queues by policy name, for the policies whose refused requests wait for their turn
 */
public record PolicySet(Map<String, QuotaPolicy> policies, PolicyTexts defaults, Map<String, PolicyTexts> texts,
    Map<String, Escalation> escalations, Map<String, AllowList> allowLists, Optional<URI> origin,
    Map<String, Waiting> queues) {

  public PolicySet {
    policies = Collections.unmodifiableMap(new LinkedHashMap<>(policies));
    texts = Map.copyOf(texts);
    escalations = Map.copyOf(escalations);
    allowLists = Map.copyOf(allowLists);
    queues = Map.copyOf(queues);
  }

  /** Policies none of which has a queue. */
  public PolicySet(Map<String, QuotaPolicy> policies, PolicyTexts defaults, Map<String, PolicyTexts> texts,
      Map<String, Escalation> escalations, Map<String, AllowList> allowLists, Optional<URI> origin) {
    this(policies, defaults, texts, escalations, allowLists, origin, Map.of());
  }

  /** The refusal texts of these policies: the defaults, each policy's own, and the origin. */
  public LimitRefusals.Builder refusals(Ticker ticker) {
    LimitRefusals.Builder b = LimitRefusals.builder().ticker(ticker).defaults(defaults);
    origin.ifPresent(b::origin);
    texts.forEach(b::texts);
    return b;
  }
}
