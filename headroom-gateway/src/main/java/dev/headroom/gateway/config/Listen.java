package dev.headroom.gateway.config;

/** A listening address; port 0 picks any free port. */
public record Listen(String host, int port) {}
