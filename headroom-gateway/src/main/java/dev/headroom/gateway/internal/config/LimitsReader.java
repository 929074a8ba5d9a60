package dev.headroom.gateway.internal.config;

import com.fasterxml.jackson.databind.JsonNode;
import dev.headroom.gateway.config.Limits;
import dev.headroom.gateway.config.Shutdown;
import dev.headroom.gateway.config.Timeouts;
import java.time.Duration;
import java.util.List;

/**
 * Reads the size bounds on requests ({@code limits}), the upstream, client and tunnel {@code timeouts}, and
 * how long a drain waits for exchanges in flight ({@code shutdown}).
 */
final class LimitsReader extends SectionReader {
  LimitsReader(List<String> problems) {
    super(problems);
  }

  Limits limits(JsonNode n) {
    if (n.isMissingNode()) {
      return new Limits(4096, 8192, 10L * 1024 * 1024);
    }
    if (!object("limits", n)) {
      return null;
    }
    keys("limits", n, "maxRequestLineBytes", "maxHeaderBytes", "maxBodyBytes", "maxConcurrentStreams");
    int line = (int) integer("limits.maxRequestLineBytes", n.path("maxRequestLineBytes"), 4096, 256, 1 << 20);
    int headers = (int) integer("limits.maxHeaderBytes", n.path("maxHeaderBytes"), 8192, 256, 1 << 20);
    long body = integer("limits.maxBodyBytes", n.path("maxBodyBytes"), 10L * 1024 * 1024, 0, Long.MAX_VALUE);
    int streams = (int) integer("limits.maxConcurrentStreams", n.path("maxConcurrentStreams"),
        Limits.DEFAULT_MAX_CONCURRENT_STREAMS, 1, 10_000);
    return new Limits(line, headers, body, streams);
  }

  Timeouts timeouts(JsonNode n) {
    if (n.isMissingNode()) {
      return new Timeouts(Duration.ofSeconds(2), Duration.ofSeconds(30), Duration.ofSeconds(60));
    }
    if (!object("timeouts", n)) {
      return null;
    }
    keys("timeouts", n, "connect", "response", "idle", "tunnelIdle");
    Duration connect = duration("timeouts.connect", n.path("connect"), Duration.ofSeconds(2));
    Duration response = duration("timeouts.response", n.path("response"), Duration.ofSeconds(30));
    Duration idle = duration("timeouts.idle", n.path("idle"), Duration.ofSeconds(60));
    Duration tunnelIdle = duration("timeouts.tunnelIdle", n.path("tunnelIdle"), Timeouts.DEFAULT_TUNNEL_IDLE);
    return new Timeouts(connect, response, idle, tunnelIdle);
  }

  Shutdown shutdown(JsonNode n) {
    if (n.isMissingNode()) {
      return new Shutdown(Shutdown.DEFAULT_DRAIN_TIMEOUT);
    }
    if (!object("shutdown", n)) {
      return null;
    }
    keys("shutdown", n, "drainTimeout");
    return new Shutdown(duration("shutdown.drainTimeout", n.path("drainTimeout"), Shutdown.DEFAULT_DRAIN_TIMEOUT));
  }
}
