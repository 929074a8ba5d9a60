/**
 * Enforcement of the vend rate-limit extension (seed 003) on core's limiter:
 * {@link dev.headroom.vend.VendRateLimiter} decides a call in every applicable
 * {@link dev.headroom.vend.format.Scope} at once with the limits of
 * {@link dev.headroom.vend.VendRateLimits}, and answers a {@link dev.headroom.vend.VendDecision}
 * (the extension data, the {@code RATE_LIMITED} refusal, {@code vend.capabilities}); the host's
 * knowledge of the caller is a {@link dev.headroom.vend.CallIdentity}, and an embedded front end's
 * vend route a {@link dev.headroom.vend.VendRoute}.
 *
 * <h2>How is this designed, and why?</h2>
 * <ul>
 * <li><b>Split</b>: the wire format ({@code dev.headroom.vend.format}: envelope reader,
 * {@code Scope}, {@code VendDuration}, {@code VendError}, {@code VendBackoff}) is
 * {@code headroom-vend-format}, Jackson only, which the client shares with the server; enforcement
 * ({@code dev.headroom.vend}: {@code VendRateLimiter}, {@code VendRateLimits},
 * {@code VendDecision}, {@code CallIdentity}) is {@code headroom-vend}, on core's limiter. The
 * format's Jackson configuration ({@code VendJson}) and envelope writer ({@code VendResponses}) are
 * part of its declared API, because the enforcement module writes what the format reads.
 * <li><b>Envelope</b>: {@code VendRequestReader} reads a request with Jackson, bounded (default 1
 * MiB, depth 64; id, caller, function and extension count bounded too) and strict (a member name
 * twice is {@code INVALID_REQUEST}: two parsers must never read two different calls). Not JSON is
 * {@code PARSE_ERROR}; JSON but not an envelope is {@code INVALID_REQUEST}; both 400, the message
 * names the field, the value and what was expected, the response echoes the id once it could be
 * read ({@code null} before). Unknown members are ignored.
 * <li><b>Scopes and partitions</b>: each scope applies at most one policy to a function (its
 * per-function policy, else the scope's default). Partitions are {@code global},
 * {@code service:<caller>}, {@code function:<function>}, {@code user:<user>}, plus
 * <code>&#64;&lt;function&gt;</code> for per-function policies of other scopes.
 * {@code context.caller} wins over {@code X-Vend-Caller}: the envelope is the protocol's statement
 * of the caller, the header a transport copy for infrastructure; the header is used only when the
 * envelope names no caller. Unknown caller or user counts in one shared anonymous partition, so
 * omitting the caller never escapes the service limit. Policies must count {@code requests}.
 * <li><b>One decision</b>: all scopes go to {@code QuotaLimiter.acquire} together (all or nothing);
 * time is the store's ticker.
 * <li><b>Data</b>: one scope reported gives the flat form with {@code scope}; several give
 * {@code scopes} keyed by scope (no {@code scope} inside). {@code used = limit - remaining};
 * {@code resets_in} is {@code t} rounded up; {@code window} and {@code resets_in} use the largest
 * of second/minute/hour/day that divides the seconds exactly (60 s = 1 minute, 47 s = 47 second, 90
 * s = 90 second); {@code retry_after} is always seconds. {@code warning} when remaining &lt; 10% of
 * limit, except on the scope that refused (the seed's refusal example has none; the error says it).
 * {@code options.scope} narrows the data to that scope when it applies. No limit for a function
 * gives {@code {"scopes": {}}}. Data only when the request declared the URN; the refusal does not
 * depend on it.
 * <li><b>Refusal</b>: {@code RATE_LIMITED}, retryable, details of the violated scope with the
 * longest retry ({@code Decision.mostConstraining}), 429.
 * {@code VendDecision.refuse(RateLimitHeaders, sink)} writes {@code Retry-After} and the RateLimit
 * fields with headroom-http and builds the body from the Retry-After actually written, so they
 * agree even with jitter.
 * <li><b>Upstream responses</b>: {@code VendDecision.decorate} splices the extension entry into the
 * upstream bytes after one streaming validation pass (every other byte kept); an existing entry for
 * our URN is replaced through a tree (values kept exactly). Larger than {@code maxResponseBytes} (1
 * MiB), not one JSON object, too deep, duplicate members, or {@code extensions} not an array:
 * passed through unchanged, without data. {@code vend.capabilities} is answered locally
 * ({@code capabilities()}) or merged into the upstream result ({@code mergeCapabilities}: our
 * extension entry added, {@code rate_limits} entries of the same scope and function replaced).
 * <li><b>Client</b>:
 * {@code VendBackoff.waitTime(retry_after, attempt, max_wait) = min(retry_after * 2^attempt, max_wait)},
 * saturating, with {@code retry_after} floored at 1 s so a retry is never immediate.
 * </ul>
 *
 * <p>May use: headroom-vend-format (its reader, {@code VendJson}, {@code VendResponses}),
 * headroom-http's RateLimit fields, headroom-core and Jackson. {@code dev.headroom.vend.internal} is
 * this module's own.
 */
package dev.headroom.vend;
