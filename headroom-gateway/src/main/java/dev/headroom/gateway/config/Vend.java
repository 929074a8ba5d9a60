package dev.headroom.gateway.config;

import java.net.URI;
import java.util.Map;
import java.util.Optional;

/**
 * A {@code type: vend} route (the vend rate-limit extension, seed 003): the POST body is read
 * (at most {@code maxRequestBytes}) as a vend envelope and decided per scope; allowed calls are
 * forwarded and the upstream's JSON response (at most {@code maxResponseBytes}) gets the
 * extension data; larger responses pass through unchanged with the RateLimit fields only.
 *
 * @param limits the policy name of each scope ({@code global}, {@code service}, {@code function},
 *     {@code user}) for every function
 * @param functions per function, the policy name of each scope that differs for it
 * @param userHeader the request header naming the authenticated user, for the {@code user} scope
 * @param mergeCapabilities {@code vend.capabilities} is forwarded and our extension merged into
 *     the upstream's answer (true), or answered by the gateway (false)
 */
public record Vend(Map<String, String> limits, Map<String, Map<String, String>> functions,
    Optional<String> userHeader, Optional<String> service, Optional<URI> documentation,
    boolean mergeCapabilities, int maxRequestBytes, int maxResponseBytes) {
  public Vend {
    limits = Map.copyOf(limits);
    functions = Map.copyOf(functions);
  }
}
