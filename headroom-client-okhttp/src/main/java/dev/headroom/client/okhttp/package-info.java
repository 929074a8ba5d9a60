/**
 * OkHttp on the client's budget engine: {@link dev.headroom.client.okhttp.BudgetInterceptor}, an
 * application interceptor that waits on the calling thread, records each response and retries a
 * refusal through the chain.
 *
 * <p>May use: headroom-client and OkHttp (provided).
 */
package dev.headroom.client.okhttp;
