package dev.headroom.gateway.internal.config;

import com.fasterxml.jackson.databind.JsonNode;
import dev.headroom.QuotaPolicy;
import dev.headroom.enforcement.Waiting;
import dev.headroom.enforcement.settings.PolicySet;
import dev.headroom.enforcement.settings.PolicySettings;
import dev.headroom.enforcement.settings.QueueSettings;
import dev.headroom.enforcement.settings.SettingsReader;
import dev.headroom.gateway.config.Escalation;
import dev.headroom.gateway.config.Policy;
import dev.headroom.gateway.config.PolicyRules;
import java.net.URI;
import java.time.Duration;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiConsumer;

/**
 * Reads {@code policies}: the YAML of each policy into headroom-http's settings model
 * ({@link PolicySettings}, the shape the Spring starters bind too), which its one converter
 * ({@link SettingsReader}) turns into the {@link QuotaPolicy}, its texts and guidance (checked now
 * rather than at the first refusal) and its escalation; each problem named by its YAML path.
 */
final class PolicyReader extends SectionReader {
  /** Guidance fields of Graceful Boundaries section 3 a policy may carry, and the settings they are. */
  static final Map<String, BiConsumer<PolicySettings, String>> GUIDANCE = guidance();

  private static Map<String, BiConsumer<PolicySettings, String>> guidance() {
    Map<String, BiConsumer<PolicySettings, String>> g = new LinkedHashMap<>();
    g.put("cachedResultUrl", PolicySettings::setCachedResultUrl);
    g.put("alternativeEndpoint", PolicySettings::setAlternativeEndpoint);
    g.put("upgradeUrl", PolicySettings::setUpgradeUrl);
    g.put("humanUrl", PolicySettings::setHumanUrl);
    return Collections.unmodifiableMap(g);
  }


  /** The public origin, against which guidance URLs are checked; null when not set. */
  private final URI origin;

  PolicyReader(List<String> problems, URI origin) {
    super(problems);
    this.origin = origin;
  }

  Map<String, Policy> policies(JsonNode n) {
    Map<String, Policy> out = new LinkedHashMap<>();
    if (n.isMissingNode()) {
      return out;
    }
    if (!object("policies", n)) {
      return out;
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      Policy p = policy("policies." + e.getKey(), e.getKey(), e.getValue());
      if (p != null) {
        out.put(e.getKey(), p);
      }
    }
    return out;
  }

  private Policy policy(String path, String name, JsonNode n) {
    if (!object(path, n)) {
      return null;
    }
    keys(path, n, "quota", "window", "unit", "algorithm", "partition", "leaseTimeout", "why",
        "description", "limitType", "guidance", "escalation", "queue", "allow", "count", "when", "shadow", "shadowFields");
    int before = problems.size();
    // The YAML's own reads: types and forms. What the values mean is the settings model's.
    PolicySettings settings = new PolicySettings();
    settings.setPartitioning("client-ip");
    if (n.path("quota").isMissingNode()) {
      problem(path + ".quota", n.path("quota"), "the number of units allowed per window, 1 or more");
    } else {
      long quota = integer(path + ".quota", n.path("quota"), -1, 1, QuotaPolicy.MAX_QUOTA);
      settings.setQuota(quota < 1 ? null : quota);
    }
    Duration window = duration(path + ".window", n.path("window"), null);
    if (window == null && n.path("window").isMissingNode()) {
      problem(path + ".window", n.path("window"), "the window, such as 1s, 1m, 1h or 1d");
    }
    settings.setWindow(window);
    optionalText(path + ".unit", n.path("unit")).ifPresent(settings::setUnit);
    optionalText(path + ".algorithm", n.path("algorithm")).ifPresent(settings::setAlgorithm);
    optionalText(path + ".partition", n.path("partition")).ifPresent(settings::setPartitioning);
    settings.setLeaseTimeout(duration(path + ".leaseTimeout", n.path("leaseTimeout"), null));
    settings.setWhy(requiredText(path + ".why", n.path("why"),
        "one sentence saying why the limit exists (Graceful Boundaries section 2)"));
    optionalText(path + ".description", n.path("description")).ifPresent(settings::setDescription);
    optionalText(path + ".limitType", n.path("limitType")).ifPresent(settings::setLimitType);
    JsonNode g = n.path("guidance");
    if (!g.isMissingNode() && object(path + ".guidance", g)) {
      keys(path + ".guidance", g, GUIDANCE.keySet().toArray(String[]::new));
      GUIDANCE.forEach((field, set) ->
          optionalText(path + ".guidance." + field, g.path(field)).ifPresent(v -> set.accept(settings, v)));
    }
    JsonNode esc = n.path("escalation");
    if (!esc.isMissingNode() && object(path + ".escalation", esc)) {
      keys(path + ".escalation", esc, "threshold", "block");
      settings.setEscalationThreshold((int) integer(path + ".escalation.threshold", esc.path("threshold"), 10, 1, 1_000_000));
      settings.setEscalationBlock(duration(path + ".escalation.block", esc.path("block"), Duration.ofMinutes(15)));
    }
    settings.setQueue(queue(path + ".queue", n.path("queue")));
    PolicyRules rules = new RulesReader(problems).rules(path, n);
    PolicySet read = model(name, settings, before);
    if (problems.size() > before) {
      return null;
    }
    QuotaPolicy quota = read.policies().get(name);
    Optional<Escalation> escalation = Optional.ofNullable(read.escalations().get(name))
        .map(e -> new Escalation(e.threshold(), e.block()));
    return new Policy(quota, quota.partitioning().orElseThrow(), read.texts().get(name), escalation,
        Optional.ofNullable(read.queues().get(name)), rules);
  }

  /**
   * {@code policies.NAME.queue}: the YAML's types only ({@code maxWait} a duration, {@code maxQueued}
   * an integer); what the values may be is the settings model's ({@link QueueSettings}), so that
   * the gateway and the Spring starter refuse a bad value with the same words. Null when absent
   * (requests are refused at once).
   */
  private QueueSettings queue(String path, JsonNode q) {
    if (q.isMissingNode() || !object(path, q)) {
      return null;
    }
    keys(path, q, "maxWait", "maxQueued");
    QueueSettings s = new QueueSettings();
    s.setMaxWait(duration(path + ".maxWait", q.path("maxWait"), null));
    JsonNode n = q.path("maxQueued");
    if (!n.isMissingNode()) {
      if (n.isIntegralNumber() && n.canConvertToInt()) {
        s.setMaxQueued(n.asInt());
      } else {
        problem(path + ".maxQueued", n, "an integer from 1 to " + Waiting.MAX_QUEUED);
      }
    }
    return s; // a value the YAML could not read has its problem; the model's at the same path is dropped
  }

  /**
   * The settings model's reading of one policy (headroom-http's {@link SettingsReader}, as the
   * Spring starters read theirs): the quota policy, the texts and guidance checked against
   * {@code service.origin}, the escalation. Each of its problems is added in this reader's form,
   * except for a key whose YAML could not be read, which has its problem already.
   */
  private PolicySet model(String name, PolicySettings settings, int before) {
    SettingsReader model = SettingsReader.of("", PolicyReader::yamlKey);
    PolicySet read = model.policies(null, Optional.ofNullable(origin), Map.of(name, settings));
    addModelProblems(model.problems(), before);
    return read;
  }

  /** The YAML key of one of the settings model's keys. */
  private static String yamlKey(String key) {
    return switch (key) {
      case "partitioning" -> "partition";
      case "escalationThreshold" -> "escalation.threshold";
      case "escalationBlock" -> "escalation.block";
      default -> GUIDANCE.containsKey(key) ? "guidance." + key : key;
    };
  }
}
