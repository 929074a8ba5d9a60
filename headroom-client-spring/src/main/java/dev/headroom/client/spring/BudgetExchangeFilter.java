package dev.headroom.client.spring;

import dev.headroom.client.ClientBudget;
import dev.headroom.client.RateLimitedException;
import dev.headroom.client.RequestCost;
import java.util.Collection;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.web.reactive.function.BodyExtractors;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import reactor.core.publisher.Mono;

/**
 * An {@link ExchangeFilterFunction} for Spring's {@code WebClient} that runs every exchange through
 * a {@link ClientBudget}, without ever blocking a thread: the exchange is subscribed once its
 * budgets admit it (the wait runs on the engine's {@link dev.headroom.client.Scheduler}), the
 * response's RateLimit fields and Retry-After update the budgets
 * (draft-ietf-httpapi-ratelimit-headers-09 section 7), and a refusal (429, or 503 with Retry-After)
 * is exchanged again after the engine's wait as its {@link dev.headroom.client.RetryPolicy} says,
 * or ends the exchange with {@link RateLimitedException}.
 *
 * <pre>{@code
 * WebClient web = WebClient.builder()
 *     .filter(BudgetExchangeFilter.of(budget))
 *     .build();
 * }</pre>
 *
 * <p>A request expected to cost more than one request in a unit the server meters (tokens, ...)
 * says so with a request attribute: {@code web.post().attribute(RequestCost.ATTRIBUTE,
 * RequestCost.of("tokens", 1200))}; without one, the engine's {@link ClientBudget.Builder#cost}
 * decides ({@link RequestCost}).
 *
 * <p>A retry exchanges the same {@link ClientRequest} again, which runs its body inserter again:
 * values and cold publishers are sent again as they were; a body from a publisher that can be
 * subscribed once should go with a policy that does not retry its method. Cancelling the
 * subscription stops the exchange and gives its permit back.
 *
 * <p>Thread-safe; share one engine across clients to share the budgets.
 */
public final class BudgetExchangeFilter implements ExchangeFilterFunction {

  private final ClientBudget budget;

  private BudgetExchangeFilter(ClientBudget budget) {
    this.budget = budget;
  }

  /** A filter over the given engine. */
  public static BudgetExchangeFilter of(ClientBudget budget) {
    return new BudgetExchangeFilter(Objects.requireNonNull(budget, "budget"));
  }

  @Override
  public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
    return Mono.defer(() -> {
      var view = ClientBudget.requestView(request.method().name(), request.url(), request.headers());
      return Mono.fromFuture(budget.executeAsync(view,
          budget.costOf(view, request.attribute(RequestCost.ATTRIBUTE).orElse(null)), true,
          new ClientBudget.AsyncTransport<ClientResponse>() {
          @Override
          public CompletableFuture<ClientResponse> send() {
            return next.exchange(request).toFuture();
          }

          @Override
          public int status(ClientResponse response) {
            return response.statusCode().value();
          }

          @Override
          public Map<String, ? extends Collection<String>> headers(ClientResponse response) {
            return response.headers().asHttpHeaders();
          }

          @Override
          public CompletableFuture<byte[]> consumeRefusal(ClientResponse response, int maxBytes) {
            return DataBufferUtils.join(
                    DataBufferUtils.takeUntilByteCount(response.body(BodyExtractors.toDataBuffers()), maxBytes))
                .map(BudgetExchangeFilter::bytes)
                .defaultIfEmpty(new byte[0])
                .toFuture();
          }

          @Override
          public void discard(ClientResponse response) {
            response.releaseBody().subscribe();
          }
        }));
    });
  }

  private static byte[] bytes(DataBuffer buffer) {
    try {
      byte[] out = new byte[buffer.readableByteCount()];
      buffer.read(out);
      return out;
    } finally {
      DataBufferUtils.release(buffer);
    }
  }
}
