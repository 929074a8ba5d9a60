package dev.headroom.gateway.config;

/** Size limits: request line, all header fields together, request body. */
public record Limits(int maxRequestLineBytes, int maxHeaderBytes, long maxBodyBytes) {}
