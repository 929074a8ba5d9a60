package dev.headroom.client;

import java.util.concurrent.CompletableFuture;

/**
 * Holds each attempt until its budgets allow it, then reports what the response said. Thread-safe
 * (the tracker is).
 */
final class PacingInterceptor implements Interceptor {

  private final BudgetTracker budgets;

  PacingInterceptor(BudgetTracker budgets) {
    this.budgets = budgets;
  }

  @Override
  public CompletableFuture<Exchange> intercept(Chain chain) {
    VendCall vend = chain instanceof RealChain ? ((RealChain) chain).state().vend : null;
    return budgets.acquire(chain.request(), vend == null ? java.util.Set.of() : vend.labels()).thenCompose(permit -> {
      CompletableFuture<Exchange> f;
      try {
        f = chain.proceed(chain.request());
      } catch (RuntimeException e) {
        budgets.release(permit);
        throw e;
      }
      return f.whenComplete((ex, error) -> {
        if (error != null) {
          budgets.release(permit);
        } else {
          budgets.record(permit, ex);
        }
      });
    });
  }
}
