package dev.headroom.client.okhttp;

import dev.headroom.client.BudgetWaitException;
import dev.headroom.client.ClientBudget;
import dev.headroom.client.RateLimitedException;
import dev.headroom.client.RequestCost;
import java.io.IOException;
import java.util.Collection;
import java.util.Map;
import java.util.Objects;
import okhttp3.Interceptor;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * An OkHttp application interceptor that runs every call through a {@link ClientBudget}: the call
 * waits on the calling thread until its budgets admit it (at most the engine's
 * {@link ClientBudget#maxWait()}, then {@link BudgetWaitException}), the response's RateLimit fields
 * and Retry-After update the budgets (draft-ietf-httpapi-ratelimit-headers-09 section 7), and a
 * refusal (429, or 503 with Retry-After) is retried with {@code chain.proceed} as the engine's
 * {@link dev.headroom.client.RetryPolicy} says, or ends the call with {@link RateLimitedException}.
 *
 * <pre>{@code
 * OkHttpClient http = new OkHttpClient.Builder()
 *     .addInterceptor(BudgetInterceptor.of(budget))
 *     .build();
 * }</pre>
 *
 * <p>A request expected to cost more than one request in a unit the server meters (tokens, ...)
 * says so with a tag: {@code new Request.Builder().tag(RequestCost.class, RequestCost.of("tokens",
 * 1200))}; without one, the engine's {@link ClientBudget.Builder#cost} decides ({@link RequestCost}).
 *
 * <p>Register it with {@code addInterceptor}, not {@code addNetworkInterceptor}: it may proceed
 * more than once per call, which OkHttp allows application interceptors only. A request whose
 * body is {@linkplain RequestBody#isOneShot() one-shot} is never sent twice. Use it with
 * {@code Call.execute()} or {@code Call.enqueue}: either way OkHttp runs interceptors on a thread
 * that may block (the caller's, or the dispatcher's).
 *
 * <p>Thread-safe; share one instance (or one engine) across clients to share the budgets.
 */
public final class BudgetInterceptor implements Interceptor {

  private final ClientBudget budget;

  private BudgetInterceptor(ClientBudget budget) {
    this.budget = budget;
  }

  /** An interceptor over the given engine. */
  public static BudgetInterceptor of(ClientBudget budget) {
    return new BudgetInterceptor(Objects.requireNonNull(budget, "budget"));
  }

  @Override
  public Response intercept(Chain chain) throws IOException {
    Request request = chain.request();
    RequestBody body = request.body();
    boolean replayable = body == null || !body.isOneShot();
    var view = ClientBudget.requestView(request.method(), request.url().uri(), request.headers().toMultimap());
    return budget.execute(view, budget.costOf(view, request.tag(RequestCost.class)), replayable,
        new ClientBudget.Transport<Response>() {
          @Override
          public Response send() throws IOException {
            return chain.proceed(request);
          }

          @Override
          public int status(Response response) {
            return response.code();
          }

          @Override
          public Map<String, ? extends Collection<String>> headers(Response response) {
            return response.headers().toMultimap();
          }

          @Override
          public byte[] consumeRefusal(Response response, int maxBytes) throws IOException {
            try (response) {
              return response.peekBody(maxBytes).bytes();
            }
          }
        });
  }
}
