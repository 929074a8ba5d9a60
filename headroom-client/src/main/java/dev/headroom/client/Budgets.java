package dev.headroom.client;

import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.List;

/**
 * The client's budgets, per scope (the origin, unless
 * {@link HeadroomClient.Builder#scope(java.util.function.Function)} says otherwise), policy and
 * partition key. Pacing reads them; responses and interceptors write them.
 *
 * <p>Thread-safe.
 */
public interface Budgets {

  /** The budgets that would pace this request now. */
  List<Budget> snapshot(HttpRequest request);

  /**
   * Records a service limit learnt outside the RateLimit fields (for example from a response body
   * extension), as though the response to {@code request} had said {@code "policy";r=remaining;t=reset}.
   */
  void observe(HttpRequest request, String policy, long remaining, Duration reset);

  /** Holds every request of the request's scope for {@code delay}, as a Retry-After would. */
  void hold(HttpRequest request, Duration delay);
}
