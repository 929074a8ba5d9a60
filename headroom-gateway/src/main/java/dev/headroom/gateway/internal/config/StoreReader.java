package dev.headroom.gateway.internal.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.headroom.gateway.config.LeasingSettings;
import dev.headroom.gateway.config.Policy;
import dev.headroom.gateway.config.ReplicaAcknowledgementSettings;
import dev.headroom.gateway.config.StoreSettings;
import dev.headroom.gateway.config.StoreType;
import dev.headroom.redis.FailurePolicy;
import dev.headroom.redis.Leasing;
import dev.headroom.redis.RedisStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;

/**
 * Reads {@code store}: where counters live (memory or Redis) and what happens when Redis cannot
 * answer in time. headroom-redis checks its own settings through its builder; nothing connects here.
 */
final class StoreReader extends SectionReader {
  StoreReader(List<String> problems) {
    super(problems);
  }

  StoreSettings store(JsonNode n) {
    if (n.isMissingNode()) {
      return new StoreSettings(StoreType.MEMORY, 1_000_000, Optional.empty(), Optional.empty(),
          FailurePolicy.FAIL_CLOSED, RedisStore.DEFAULT_DECISION_DEADLINE, RedisStore.DEFAULT_REFUSAL_MEMORY,
          Optional.empty(), Optional.empty());
    }
    if (!object("store", n)) {
      return null;
    }
    keys("store", n, "type", "maxKeys", "uri", "keyPrefix", "failurePolicy", "decisionDeadline", "refusalMemory",
        "leasing", "replicaAcknowledgements");
    String type = optionalText("store.type", n.path("type")).orElse("memory");
    StoreType storeType = null;
    switch (type) {
      case "memory" -> storeType = StoreType.MEMORY;
      case "redis" -> storeType = StoreType.REDIS;
      default -> problem("store.type", n.path("type"), "memory or redis");
    }
    long maxKeys = integer("store.maxKeys", n.path("maxKeys"), 1_000_000, 1, Long.MAX_VALUE);
    Optional<String> uri = optionalText("store.uri", n.path("uri"));
    Optional<String> keyPrefix = optionalText("store.keyPrefix", n.path("keyPrefix"));
    FailurePolicy failure = FailurePolicy.FAIL_CLOSED;
    Optional<String> failureText = optionalText("store.failurePolicy", n.path("failurePolicy"));
    if (failureText.isPresent()) {
      switch (failureText.get()) {
        case "fail-open" -> failure = FailurePolicy.FAIL_OPEN;
        case "fail-closed" -> failure = FailurePolicy.FAIL_CLOSED;
        case "fallback" -> failure = FailurePolicy.FALLBACK;
        default -> problem("store.failurePolicy", n.path("failurePolicy"),
            "fail-open (admit), fail-closed (503 temporary-reduced-capacity) or fallback (decide in memory)");
      }
    }
    Duration deadline = duration("store.decisionDeadline", n.path("decisionDeadline"),
        RedisStore.DEFAULT_DECISION_DEADLINE);
    Duration refusalMemory = refusalMemory(n.path("refusalMemory"));
    if (storeType == StoreType.REDIS) {
      if (uri.isEmpty()) {
        problem("store.uri", n.path("uri"), "a redis:// or redis-sentinel:// URI when store.type is redis");
      }
      // headroom-redis checks its own settings; nothing connects here
      RedisStore.Builder b = RedisStore.builder();
      check("store.uri", () -> uri.ifPresent(b::uri));
      check("store.keyPrefix", () -> keyPrefix.ifPresent(b::keyPrefix));
      check("store.decisionDeadline", () -> b.decisionDeadline(deadline));
      check("store.refusalMemory", () -> b.refusalMemory(refusalMemory));
    } else {
      for (String k : List.of("uri", "keyPrefix", "failurePolicy", "decisionDeadline", "refusalMemory", "leasing",
          "replicaAcknowledgements")) {
        if (!n.path(k).isMissingNode()) {
          problem("store." + k, n.path(k), "no " + k + " when store.type is memory");
        }
      }
    }
    Optional<LeasingSettings> leasing = storeType == StoreType.REDIS ? leasing(n.path("leasing")) : Optional.empty();
    Optional<ReplicaAcknowledgementSettings> acknowledgements = storeType == StoreType.REDIS
        ? replicaAcknowledgements(n.path("replicaAcknowledgements"), deadline) : Optional.empty();
    return new StoreSettings(storeType, maxKeys, uri, keyPrefix, failure, deadline, refusalMemory, leasing,
        acknowledgements);
  }

  /**
   * {@code store.replicaAcknowledgements}: absent, off; else {@code replicas} (required) and
   * {@code timeout} (default {@link RedisStore#DEFAULT_REPLICA_ACKNOWLEDGEMENT_TIMEOUT}), shorter
   * than the decision deadline, which counts the wait for the replicas too (headroom-redis README,
   * "Sentinel and Cluster failover").
   */
  private Optional<ReplicaAcknowledgementSettings> replicaAcknowledgements(JsonNode n, Duration deadline) {
    String path = "store.replicaAcknowledgements";
    if (n.isMissingNode()) {
      return Optional.empty();
    }
    if (!n.isObject()) {
      problem(path, n, "a mapping such as {replicas: 1, timeout: 50ms}");
      return Optional.empty();
    }
    keys(path, n, "replicas", "timeout");
    if (n.path("replicas").isMissingNode()) {
      problem(path + ".replicas", n.path("replicas"), "how many replicas must acknowledge each admission, an "
          + "integer from 1 to " + RedisStore.MAX_ACKNOWLEDGING_REPLICAS);
      return Optional.empty();
    }
    long replicas = integer(path + ".replicas", n.path("replicas"), 0, 1, RedisStore.MAX_ACKNOWLEDGING_REPLICAS);
    Duration timeout = duration(path + ".timeout", n.path("timeout"), RedisStore.DEFAULT_REPLICA_ACKNOWLEDGEMENT_TIMEOUT);
    if (replicas == 0) {
      return Optional.empty(); // reported
    }
    if (timeout.compareTo(deadline) >= 0) {
      problem(path + ".timeout", n.path("timeout").isMissingNode() ? TextNode.valueOf(timeout.toMillis() + "ms (the default)")
          : n.path("timeout"), "a duration shorter than store.decisionDeadline (" + deadline.toMillis()
          + "ms), which counts the wait for the replicas too");
      return Optional.empty();
    }
    // within headroom-redis's ranges: replicas as read, a timeout above 0 and under the deadline (at most 1 minute)
    return Optional.of(new ReplicaAcknowledgementSettings((int) replicas, timeout));
  }

  /**
   * {@code store.refusalMemory}: how long a refusal Redis gave answers equal requests without a
   * round trip (headroom-redis README, "Refusals remembered"); {@code 0}, {@code off} or
   * {@code false} (YAML reads a bare {@code off} as false) sends every request to Redis, {@code true}
   * is the default.
   */
  private Duration refusalMemory(JsonNode n) {
    if (n.isBoolean()) {
      return n.asBoolean() ? RedisStore.DEFAULT_REFUSAL_MEMORY : Duration.ZERO;
    }
    if ((n.isIntegralNumber() && n.asLong() == 0)
        || (n.isTextual() && List.of("0", "0s", "0ms", "off").contains(n.asText().trim()))) {
      return Duration.ZERO;
    }
    if (n.isMissingNode()) {
      return RedisStore.DEFAULT_REFUSAL_MEMORY;
    }
    Optional<Duration> d = parseDuration(n);
    if (d.isEmpty()) {
      problem("store.refusalMemory", n, "0 or off (every request to Redis), or a duration up to 1h such as 500ms or 1s");
      return RedisStore.DEFAULT_REFUSAL_MEMORY;
    }
    return d.get();
  }

  /**
   * {@code store.leasing}: absent or false, off; true, every fixed-window and token-bucket policy
   * with the default slice options; an object, the policies it names (all leasable ones when it
   * names none) and the options it sets. Whether the names are policies of this file is checked by
   * {@link #leasedPolicies} once the policies are read.
   */
  private Optional<LeasingSettings> leasing(JsonNode n) {
    if (n.isMissingNode() || (n.isBoolean() && !n.asBoolean())) {
      return Optional.empty();
    }
    LeasingSettings defaults = new LeasingSettings(List.of(), Leasing.DEFAULT_TARGET_INTERVAL,
        Leasing.DEFAULT_MAX_FRACTION, Leasing.DEFAULT_MAX_HOLD, Leasing.DEFAULT_IDLE_RETURN, Leasing.DEFAULT_MAX_KEYS);
    if (n.isBoolean()) {
      return Optional.of(defaults);
    }
    if (!n.isObject()) {
      problem("store.leasing", n, "true, false or an object (policies, targetInterval, maxFraction, maxHold, "
          + "idleReturn, maxKeys)");
      return Optional.empty();
    }
    keys("store.leasing", n, "policies", "targetInterval", "maxFraction", "maxHold", "idleReturn", "maxKeys");
    List<String> policies = new ArrayList<>();
    JsonNode list = n.path("policies");
    if (!list.isMissingNode()) {
      if (!list.isArray() || list.isEmpty()) {
        problem("store.leasing.policies", list, "a non-empty list of policy names (leave it out to lease every "
            + "fixed-window and token-bucket policy)");
      } else {
        for (int i = 0; i < list.size(); i++) {
          optionalText("store.leasing.policies[" + i + "]", list.get(i)).ifPresent(policies::add);
        }
      }
    }
    Leasing.Builder b = Leasing.builder().everyPolicy();
    Duration target = duration("store.leasing.targetInterval", n.path("targetInterval"), defaults.targetInterval());
    Duration hold = duration("store.leasing.maxHold", n.path("maxHold"), defaults.maxHold());
    Duration idle = duration("store.leasing.idleReturn", n.path("idleReturn"), defaults.idleReturn());
    long keys = integer("store.leasing.maxKeys", n.path("maxKeys"), defaults.maxKeys(), 1, 10_000_000);
    double fraction = defaults.maxFraction();
    JsonNode f = n.path("maxFraction");
    if (!f.isMissingNode()) {
      if (!f.isNumber() || !(f.asDouble() > 0 && f.asDouble() <= 1)) {
        problem("store.leasing.maxFraction", f, "a number above 0 and at most 1");
      } else {
        fraction = f.asDouble();
      }
    }
    double chosen = fraction;
    // headroom-redis checks its own ranges (the message names the field)
    check("store.leasing.targetInterval", () -> b.targetInterval(target));
    check("store.leasing.maxHold", () -> b.maxHold(hold));
    check("store.leasing.idleReturn", () -> b.idleReturn(idle));
    check("store.leasing.maxFraction", () -> b.maxFraction(chosen));
    return Optional.of(new LeasingSettings(policies, target, fraction, hold, idle, (int) keys));
  }

  /**
   * After the policies are read: every name in {@code store.leasing.policies} must be a policy of
   * the file that can be leased (a fixed window or a token bucket).
   */
  void leasedPolicies(StoreSettings store, Map<String, Policy> policies) {
    if (store == null || store.leasing().isEmpty() || policies == null) {
      return;
    }
    List<String> names = store.leasing().get().policies();
    for (int i = 0; i < names.size(); i++) {
      String name = names.get(i);
      Policy p = policies.get(name);
      String path = "store.leasing.policies[" + i + "]";
      if (p == null) {
        problem(path, TextNode.valueOf(name), "the name of a policy under policies, one of "
            + new TreeSet<>(policies.keySet()));
      } else if (!Leasing.supports(p.quota().algorithm())) {
        problem(path, TextNode.valueOf(name), "a fixed-window or token-bucket "
            + "policy (a concurrency unit is held by one request until it completes; a sliding window would "
            + "over-admit units spent after its window ended), not " + p.quota().algorithm().token());
      }
    }
  }
}
