package dev.headroom.gateway.config;

import java.time.Duration;

/** Timeouts: connecting to an upstream, waiting for its response head, idle connections. */
public record Timeouts(Duration connect, Duration response, Duration idle) {}
