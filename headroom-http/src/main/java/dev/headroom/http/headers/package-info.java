/**
 * The RateLimit header fields in every dialect ({@link dev.headroom.http.headers.HeaderDialect}):
 * written for a decision by {@link dev.headroom.http.headers.RateLimitHeaders}, with the optional
 * server rules of a route ({@link dev.headroom.http.headers.FieldRules}), and parsed, never
 * throwing, by {@link dev.headroom.http.headers.RateLimitFields} into
 * {@link dev.headroom.http.headers.QuotaPolicyItem}s and
 * {@link dev.headroom.http.headers.ServiceLimitItem}s with {@link dev.headroom.http.headers.Diagnostic}s
 * for what was malformed (draft-ietf-httpapi-ratelimit-headers-09 sections 3, 4 and 7).
 *
 * <p>May use: {@code dev.headroom.http}, {@code .sf} and headroom-core.
 */
package dev.headroom.http.headers;
