package dev.headroom.client.spring;

import dev.headroom.client.BudgetWaitException;
import dev.headroom.client.ClientBudget;
import dev.headroom.client.RateLimitedException;
import dev.headroom.client.RequestCost;
import java.io.IOException;
import java.io.InputStream;
import java.util.Collection;
import java.util.Map;
import java.util.Objects;
import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;

/**
 * A {@link ClientHttpRequestInterceptor} for Spring's {@code RestClient} and {@code RestTemplate}
 * that runs every request through a {@link ClientBudget}: the request waits on the calling thread
 * until its budgets admit it (at most the engine's {@link ClientBudget#maxWait()}, then
 * {@link BudgetWaitException}), the response's RateLimit fields and Retry-After update the budgets
 * (draft-ietf-httpapi-ratelimit-headers-09 section 7), and a refusal (429, or 503 with Retry-After)
 * is sent again with {@code execution.execute} as the engine's {@link dev.headroom.client.RetryPolicy}
 * says, or ends the request with {@link RateLimitedException} (an {@link IOException}, which
 * RestClient reports as a {@code ResourceAccessException} whose cause it is).
 *
 * <pre>{@code
 * RestClient rest = RestClient.builder()
 *     .requestInterceptor(BudgetRequestInterceptor.of(budget))
 *     .build();
 * }</pre>
 *
 * <p>A request expected to cost more than one request in a unit the server meters (tokens, ...)
 * says so with a request attribute: {@code rest.post().attribute(RequestCost.ATTRIBUTE,
 * RequestCost.of("tokens", 1200))}; without one, the engine's {@link ClientBudget.Builder#cost}
 * decides ({@link RequestCost}).
 *
 * <p>The body reaches interceptors as a byte array, so it can always be sent again; whether a
 * method may be retried is the engine's {@link dev.headroom.client.RetryPolicy}'s call. Register it
 * last among the interceptors: Spring's execution runs the interceptors after it on the first try
 * only, and a retry goes straight to the request factory.
 *
 * <p>Thread-safe; share one engine across clients to share the budgets.
 */
public final class BudgetRequestInterceptor implements ClientHttpRequestInterceptor {

  private final ClientBudget budget;

  private BudgetRequestInterceptor(ClientBudget budget) {
    this.budget = budget;
  }

  /** An interceptor over the given engine. */
  public static BudgetRequestInterceptor of(ClientBudget budget) {
    return new BudgetRequestInterceptor(Objects.requireNonNull(budget, "budget"));
  }

  @Override
  public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
      throws IOException {
    var view = ClientBudget.requestView(request.getMethod().name(), request.getURI(), request.getHeaders());
    return budget.execute(view, budget.costOf(view, request.getAttributes().get(RequestCost.ATTRIBUTE)), true,
        new ClientBudget.Transport<ClientHttpResponse>() {
          @Override
          public ClientHttpResponse send() throws IOException {
            return execution.execute(request, body);
          }

          @Override
          public int status(ClientHttpResponse response) throws IOException {
            return response.getStatusCode().value();
          }

          @Override
          public Map<String, ? extends Collection<String>> headers(ClientHttpResponse response) {
            return response.getHeaders();
          }

          @Override
          public byte[] consumeRefusal(ClientHttpResponse response, int maxBytes) throws IOException {
            try (response; InputStream in = response.getBody()) {
              return in.readNBytes(maxBytes);
            }
          }
        });
  }
}
