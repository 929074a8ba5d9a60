package dev.headroom.gateway.config;

import dev.headroom.enforcement.discovery.ConformanceLevel;
import java.net.URI;
import java.util.Optional;

/**
 * Who the gateway speaks for: the discovery document's {@code service} and {@code description},
 * its changelog and feed, the public {@code origin} callers reach it at (against which absolute
 * guidance URLs must be same-origin, Graceful Boundaries SC-6), a {@code statusUrl} sent on
 * availability errors (502, 503, 504), the path of the human-readable limits page the gateway
 * serves itself ({@code humanUrl}: policies, windows and why, generated from this configuration)
 * and the conformance level the operator declares instead of the computed one.
 */
public record Service(String name, String description, Optional<String> changelog, Optional<String> feed,
    Optional<URI> origin, Optional<String> statusUrl, Optional<String> humanUrl,
    Optional<ConformanceLevel> conformance) {}
