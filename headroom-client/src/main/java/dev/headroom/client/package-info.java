/**
 * The self-pacing client: {@link dev.headroom.client.HeadroomClient} over
 * {@code java.net.http.HttpClient}, a chain of {@link dev.headroom.client.Interceptor}s in OkHttp's
 * shape, on the budget engine {@link dev.headroom.client.ClientBudget} that the OkHttp, Spring and
 * HttpClient 5 integrations share. It reads every RateLimit dialect, Retry-After, refusal bodies and
 * the discovery document, keeps {@link dev.headroom.client.Budgets} per scope, policy and partition
 * key, spends them by its {@link dev.headroom.client.Pacing} and retries refusals by its
 * {@link dev.headroom.client.RetryPolicy}. The module's README says how it paces and what a caller
 * can rely on.
 *
 * <p>May use: headroom-http (the vocabulary only, and headroom-core through it),
 * headroom-vend-format and Jackson. Never enforcement, a store or the gateway.
 */
package dev.headroom.client;
