/**
 * The HTTP vocabulary of rate limits without a server: what the gateway, the embedded front ends,
 * the client and the checker all say and read the same way. This package holds the field names
 * ({@link dev.headroom.http.HeaderNames}), {@link dev.headroom.http.RetryAfter}, the
 * {@code pk} exposure SPI ({@link dev.headroom.http.PartitionKeyExposure}) and the words for I/O
 * failures ({@link dev.headroom.http.IoFailure}); its sub-packages hold the RateLimit fields in
 * every dialect ({@code .headers}), refusal and error bodies ({@code .body}), the one path-template
 * grammar ({@code .path}) and Structured Fields ({@code .sf}).
 *
 * <p>May use: headroom-core, Jackson and the Structured Fields library. Never enforcement: the gate,
 * plans and partition derivation are headroom-enforcement's, so the client and the checker carry
 * none of them.
 */
package dev.headroom.http;
