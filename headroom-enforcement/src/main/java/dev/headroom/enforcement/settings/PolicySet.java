package dev.headroom.enforcement.settings;

import dev.headroom.QuotaPolicy;
import dev.headroom.Ticker;
import dev.headroom.enforcement.Escalation;
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
 */
public record PolicySet(Map<String, QuotaPolicy> policies, PolicyTexts defaults, Map<String, PolicyTexts> texts,
    Map<String, Escalation> escalations, Map<String, AllowList> allowLists, Optional<URI> origin) {

  public PolicySet {
    policies = Collections.unmodifiableMap(new LinkedHashMap<>(policies));
    texts = Map.copyOf(texts);
    escalations = Map.copyOf(escalations);
    allowLists = Map.copyOf(allowLists);
  }

  /** The refusal texts of these policies: the defaults, each policy's own, and the origin. */
  public LimitRefusals.Builder refusals(Ticker ticker) {
    LimitRefusals.Builder b = LimitRefusals.builder().ticker(ticker).defaults(defaults);
    origin.ifPresent(b::origin);
    texts.forEach(b::texts);
    return b;
  }
}
