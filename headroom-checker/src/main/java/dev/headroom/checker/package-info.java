/**
 * The conformance checker behind {@code headroom check URL}: {@link dev.headroom.checker.Checker}
 * reads a service's discovery document, RateLimit fields and refusals and concludes a
 * {@link dev.headroom.checker.Report} of {@link dev.headroom.checker.Requirement}s and
 * {@link dev.headroom.checker.Finding}s at a Graceful Boundaries {@link dev.headroom.checker.Level};
 * {@link dev.headroom.checker.CheckCommand} is the picocli command headroom-cli registers.
 *
 * <h2>How is this designed, and why?</h2>
 * <ul>
 * <li>{@code headroom check} does not use the pacing client (it wants to see refusals): it is plain
 * {@code HttpClient}, bounded bodies, at most {@code --probe N} requests to the probed endpoint.
 * {@code Checker} is the entry point; {@code CheckRun} holds one check's state and sends the
 * requests; one class per concern adds findings and evidence ({@code DiscoveryCheck},
 * {@code FieldCheck}, {@code BodyCheck}, {@code RefusalCheck}, {@code GuidanceCheck},
 * {@code CloakingCheck}) and {@code Verdict} turns the evidence into requirements and a level for
 * the {@code Report}. It follows every link a refusal hands out that stays on the origin
 * ({@code cachedResultUrl}, {@code alternativeEndpoint}, {@code upgradeUrl}, {@code humanUrl}; a
 * 404 or 410 fails level 3), reads both conventional discovery paths (they must agree), reads
 * endpoint patterns by the one grammar ({@code PathTemplate}: {@code {id}}, {@code *}, {@code /**}
 * are never requested), reports text that instructs agents in any non-success body (SC-16, from
 * headroom-http's {@code RefusalReader} issues, a warning), resets over a year or beyond their
 * policy's window, a declared level above (warning) or below (note) the one observed, and with
 * {@code --cloaking} compares the target and the discovery document as a browser sees them (SC-9,
 * word containment below 60%).
 * </ul>
 *
 * <p>May use: headroom-client (and through it headroom-http and headroom-core), Jackson, picocli and
 * a JSON Schema validator. A module of its own so that runtime JSON Schema validation stays out of
 * the client library and the gateway.
 */
package dev.headroom.checker;
