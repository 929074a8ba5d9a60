package dev.headroom.gateway.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.headroom.Algorithm;
import dev.headroom.Partitioning;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.gateway.config.Escalation;
import dev.headroom.gateway.config.Policy;
import dev.headroom.gateway.config.PolicyRules;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.LimitType;
import dev.headroom.http.body.PolicyTexts;
import java.net.URI;
import java.time.Duration;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Reads {@code policies}: each quota policy, built by headroom-core's {@link QuotaPolicy} builder,
 * with its texts and guidance checked by headroom-http now rather than at the first refusal.
 */
final class PolicyReader extends SectionReader {
  /** Guidance fields of Graceful Boundaries section 3 a policy may carry. */
  static final Set<String> GUIDANCE =
      new LinkedHashSet<>(List.of("cachedResultUrl", "alternativeEndpoint", "upgradeUrl", "humanUrl"));


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
        "description", "limitType", "guidance", "escalation", "allow", "count", "when", "shadow", "shadowFields");
    int before = problems.size();
    long quota = integer(path + ".quota", n.path("quota"), -1, 1, QuotaPolicy.MAX_QUOTA);
    if (n.path("quota").isMissingNode()) {
      problem(path + ".quota", n.path("quota"), "the number of units allowed per window, 1 or more");
    }
    Duration window = duration(path + ".window", n.path("window"), null);
    if (window == null && n.path("window").isMissingNode()) {
      problem(path + ".window", n.path("window"), "the window, such as 1s, 1m, 1h or 1d");
    } else if (window != null && (window.toNanos() % 1_000_000_000L != 0 || window.isZero())) {
      problem(path + ".window", n.path("window"), "a whole number of seconds, at least 1s");
    }
    QuotaUnit unit = QuotaUnit.REQUESTS;
    Optional<String> unitText = optionalText(path + ".unit", n.path("unit"));
    if (unitText.isPresent()) {
      try {
        unit = QuotaUnit.fromToken(unitText.get());
      } catch (IllegalArgumentException ex) {
        problem(path + ".unit", n.path("unit"), "one of requests, content-bytes, concurrent-requests");
      }
    }
    Algorithm algorithm = null;
    Optional<String> algText = optionalText(path + ".algorithm", n.path("algorithm"));
    if (algText.isPresent()) {
      try {
        algorithm = Algorithm.fromToken(algText.get());
      } catch (IllegalArgumentException ex) {
        problem(path + ".algorithm", n.path("algorithm"),
            "one of " + String.join(", ", Arrays.stream(Algorithm.values()).map(Algorithm::token).toList()));
      }
    }
    String partitionText = optionalText(path + ".partition", n.path("partition")).orElse("client-ip");
    Partitioning partition = null;
    try {
      partition = Partitioning.parse(partitionText);
    } catch (IllegalArgumentException ex) {
      libraryProblem(path + ".partition", ex.getMessage(), "partitioning");
    }
    Duration leaseTimeout = duration(path + ".leaseTimeout", n.path("leaseTimeout"), null);
    String why = requiredText(path + ".why", n.path("why"),
        "one sentence saying why the limit exists (Graceful Boundaries section 2)");
    Optional<String> description = optionalText(path + ".description", n.path("description"));
    Optional<String> limitType = optionalText(path + ".limitType", n.path("limitType"));
    Map<String, String> guidance = new LinkedHashMap<>();
    JsonNode g = n.path("guidance");
    if (!g.isMissingNode() && object(path + ".guidance", g)) {
      keys(path + ".guidance", g, GUIDANCE.toArray(String[]::new));
      for (String field : GUIDANCE) {
        optionalText(path + ".guidance." + field, g.path(field)).ifPresent(v -> guidance.put(field, v));
      }
    }
    PolicyTexts texts = texts(path, n, why, description, limitType, guidance);
    Optional<Escalation> escalation = Optional.empty();
    JsonNode esc = n.path("escalation");
    if (!esc.isMissingNode() && object(path + ".escalation", esc)) {
      keys(path + ".escalation", esc, "threshold", "block");
      int threshold = (int) integer(path + ".escalation.threshold", esc.path("threshold"), 10, 1, 1_000_000);
      Duration block = duration(path + ".escalation.block", esc.path("block"), Duration.ofMinutes(15));
      if (block != null && (block.isZero() || block.toNanos() % 1_000_000_000L != 0)) {
        problem(path + ".escalation.block", esc.path("block"), "a whole number of seconds, at least 1s");
      }
      escalation = Optional.of(new Escalation(threshold, block));
    }
    PolicyRules rules = new RulesReader(problems).rules(path, n);
    if (problems.size() > before) {
      return null;
    }
    try {
      QuotaPolicy.Builder b = QuotaPolicy.builder(name).quota(quota).window(window).unit(unit)
          .partitioning(partition);
      if (algorithm != null) {
        b.algorithm(algorithm);
      }
      if (leaseTimeout != null) {
        b.leaseTimeout(leaseTimeout);
      }
      return new Policy(b.build(), partition, texts, escalation, rules);
    } catch (IllegalArgumentException ex) {
      problems.add(path + ": " + ex.getMessage());
      return null;
    }
  }

  /**
   * The policy's texts, checked by headroom-http now rather than at the first refusal: {@code why}
   * names no mechanism (SC-2) and restates nothing, no text instructs agents (SC-16), the limit type
   * is a token, and the machine-actionable guidance URLs are relative or on {@code service.origin}
   * (SC-6). Each message is reported under the YAML path of the field it concerns.
   */
  private PolicyTexts texts(String path, JsonNode n, String why, Optional<String> description,
      Optional<String> limitType, Map<String, String> guidance) {
    if (why == null) {
      return null;
    }
    PolicyTexts.Builder b = PolicyTexts.builder(why);
    description.ifPresent(b::description);
    if (limitType.isPresent()) {
      try {
        b.limitType(LimitType.of(limitType.get()));
      } catch (IllegalArgumentException e) {
        libraryProblem(path + ".limitType", e.getMessage());
      }
    }
    Optional.ofNullable(guidance.get("cachedResultUrl")).ifPresent(b::cachedResultUrl);
    Optional.ofNullable(guidance.get("alternativeEndpoint")).ifPresent(b::alternativeEndpoint);
    Optional.ofNullable(guidance.get("upgradeUrl")).ifPresent(b::upgradeUrl);
    Optional.ofNullable(guidance.get("humanUrl")).ifPresent(b::humanUrl);
    PolicyTexts texts;
    try {
      texts = b.build();
    } catch (IllegalArgumentException e) {
      libraryProblem(path + "." + textField(e.getMessage()), e.getMessage());
      return null;
    }
    try {
      LimitRefusals.builder().ticker(dev.headroom.Ticker.system()).origin(origin)
          .defaults(texts).build();
    } catch (IllegalArgumentException e) {
      libraryProblem(path + "." + textField(e.getMessage()), e.getMessage());
      return null;
    }
    return texts;
  }

  /** The YAML key under a policy that a headroom-http text message is about. */
  private static String textField(String message) {
    for (String g : GUIDANCE) {
      if (message.contains(g)) {
        return "guidance." + g;
      }
    }
    for (String f : List.of("why", "description", "limitType")) {
      if (message.startsWith(f + ":") || message.contains(" " + f + ":")) {
        return f;
      }
    }
    return "why";
  }
}
