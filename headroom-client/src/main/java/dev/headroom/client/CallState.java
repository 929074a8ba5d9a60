package dev.headroom.client;

/**
 * What the steps of one call share across its attempts: for a vend call, what the client read of
 * its envelope; the call's stated cost. Written by the outer step before the first attempt, read by the inner ones;
 * volatile because attempts may run on other threads.
 */
final class CallState {

  /** The vend call, when the request is one (see {@link VendClientOptions#isVendCall}). */
  volatile VendCall vend;

  /** What the call was said to cost ({@link HeadroomClient#send(java.net.http.HttpRequest,
   * java.net.http.HttpResponse.BodyHandler, RequestCost)}); null for the engine's {@link ClientBudget#costOf}. */
  volatile RequestCost cost;
}
