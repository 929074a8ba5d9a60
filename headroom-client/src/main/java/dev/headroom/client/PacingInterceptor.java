package dev.headroom.client;

import java.net.http.HttpRequest;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;

/**
 * Holds each attempt until its budgets allow it, then reports what the response said, and marks the
 * exchange of a request sent to ask a budget that may be spent ({@link Exchange#asked()}).
 * Thread-safe (the tracker is).
 */
final class PacingInterceptor implements Interceptor {

  private final BudgetTracker budgets;
  /** A call's cost when it states none ({@link ClientBudget#costOf}). */
  private final Function<HttpRequest, RequestCost> defaultCost;

  PacingInterceptor(BudgetTracker budgets, Function<HttpRequest, RequestCost> defaultCost) {
    this.budgets = budgets;
    this.defaultCost = defaultCost;
  }

  @Override
  public CompletableFuture<Exchange> intercept(Chain chain) {
    CallState state = chain instanceof RealChain ? ((RealChain) chain).state() : null;
    VendCall vend = state == null ? null : state.vend;
    RequestCost stated = state == null ? null : state.cost;
    RequestCost cost = stated != null ? stated : defaultCost.apply(chain.request());
    return budgets.acquire(chain.request(), vend == null ? Set.of() : vend.labels(), cost).thenCompose(permit -> {
      CompletableFuture<Exchange> f;
      try {
        f = chain.proceed(chain.request());
      } catch (RuntimeException e) {
        budgets.release(permit);
        throw e;
      }
      return f.handle((ex, error) -> {
        if (error != null) {
          budgets.release(permit);
          throw error instanceof CompletionException ce ? ce : new CompletionException(error);
        }
        budgets.record(permit, ex);
        // The retry step waits an ask's refusal as it stands (RetryPolicy#askDelay).
        return permit.ask() ? ex.asAsk() : ex;
      });
    });
  }
}
