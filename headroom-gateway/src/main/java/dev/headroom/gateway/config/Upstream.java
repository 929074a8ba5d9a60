package dev.headroom.gateway.config;

/**
 * An origin server. {@code demo} starts the built-in demo upstream in-process on a loopback port
 * instead of naming a host and port.
 */
public record Upstream(String name, String host, int port, boolean demo, int maxConnections) {}
