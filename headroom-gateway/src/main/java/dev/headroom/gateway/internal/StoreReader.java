package dev.headroom.gateway.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.headroom.gateway.GatewayConfig.StoreSettings;
import dev.headroom.gateway.GatewayConfig.StoreType;
import dev.headroom.redis.FailurePolicy;
import dev.headroom.redis.RedisStore;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

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
          FailurePolicy.FAIL_CLOSED, RedisStore.DEFAULT_DECISION_DEADLINE);
    }
    if (!object("store", n)) {
      return null;
    }
    keys("store", n, "type", "maxKeys", "uri", "keyPrefix", "failurePolicy", "decisionDeadline");
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
    if (storeType == StoreType.REDIS) {
      if (uri.isEmpty()) {
        problem("store.uri", n.path("uri"), "a redis:// URI when store.type is redis");
      }
      // headroom-redis checks its own settings; nothing connects here
      RedisStore.Builder b = RedisStore.builder();
      check("store.uri", () -> uri.ifPresent(b::uri));
      check("store.keyPrefix", () -> keyPrefix.ifPresent(b::keyPrefix));
      check("store.decisionDeadline", () -> b.decisionDeadline(deadline));
    } else {
      for (String k : List.of("uri", "keyPrefix", "failurePolicy", "decisionDeadline")) {
        if (!n.path(k).isMissingNode()) {
          problem("store." + k, n.path(k), "no " + k + " when store.type is memory");
        }
      }
    }
    return new StoreSettings(storeType, maxKeys, uri, keyPrefix, failure, deadline);
  }
}
