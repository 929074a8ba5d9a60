/**
 * Apache HttpClient 5 on the client's budget engine: exec chain handlers for the classic
 * ({@link dev.headroom.client.httpclient5.BudgetExecChainHandler}) and the async
 * ({@link dev.headroom.client.httpclient5.BudgetAsyncExecChainHandler}) client. HttpClient 5's own
 * retry strategy would retry 429 and 503 unpaced, so installing a handler keeps it to I/O failures.
 *
 * <p>May use: headroom-client and HttpClient 5 (provided).
 */
package dev.headroom.client.httpclient5;
