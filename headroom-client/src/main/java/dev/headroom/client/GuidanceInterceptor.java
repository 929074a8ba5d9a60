package dev.headroom.client;

import dev.headroom.http.body.Refusal;
import java.net.URI;
import java.net.http.HttpRequest;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Follows a refusal's constructive guidance (Graceful Boundaries section 3), when the caller allows
 * it: for a refused GET or HEAD, requests the {@code cachedResultUrl} (preferred, "use cached >
 * try alternative") or else the {@code alternativeEndpoint} once, and returns that response when it
 * succeeds; otherwise the refusal stands. Only relative or same-origin URLs are followed (SC-6), so
 * an intermediary that rewrites a body cannot send the client elsewhere. Thread-safe (stateless).
 */
final class GuidanceInterceptor implements Interceptor {

  @Override
  public CompletableFuture<Exchange> intercept(Chain chain) {
    HttpRequest request = chain.request();
    return chain.proceed(request).thenCompose(ex -> {
      if (!ex.isRefused() || ex.refusal().isEmpty()
          || !(request.method().equals("GET") || request.method().equals("HEAD"))) {
        return CompletableFuture.completedFuture(ex);
      }
      Optional<URI> target = target(request.uri(), ex.refusal().get());
      if (target.isEmpty()) {
        return CompletableFuture.completedFuture(ex);
      }
      HttpRequest follow = HttpRequest.newBuilder(request, (name, value) -> true).uri(target.get()).build();
      return chain.proceed(follow).handle((f, error) -> error == null && f.isSuccess() ? f : ex);
    });
  }

  static Optional<URI> target(URI base, Refusal refusal) {
    Optional<URI> cached = refusal.cachedResultUrl().flatMap(u -> Origins.sameOriginTarget(base, u));
    if (cached.isPresent() && !cached.get().equals(base)) {
      return cached;
    }
    return refusal.alternativeEndpoint().flatMap(u -> Origins.sameOriginTarget(base, u)).filter(u -> !u.equals(base));
  }
}
