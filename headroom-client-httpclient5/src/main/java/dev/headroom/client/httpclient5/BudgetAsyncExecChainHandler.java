package dev.headroom.client.httpclient5;

import dev.headroom.client.ClientBudget;
import dev.headroom.client.RateLimitedException;
import dev.headroom.client.RequestCost;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.apache.hc.client5.http.ClientProtocolException;
import org.apache.hc.client5.http.async.AsyncExecCallback;
import org.apache.hc.client5.http.async.AsyncExecChain;
import org.apache.hc.client5.http.async.AsyncExecChainHandler;
import org.apache.hc.client5.http.impl.DefaultHttpRequestRetryStrategy;
import org.apache.hc.client5.http.impl.async.HttpAsyncClientBuilder;
import org.apache.hc.core5.http.EntityDetails;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.HttpRequest;
import org.apache.hc.core5.http.HttpResponse;
import org.apache.hc.core5.http.nio.AsyncDataConsumer;
import org.apache.hc.core5.http.nio.AsyncEntityProducer;
import org.apache.hc.core5.http.nio.CapacityChannel;
import org.apache.hc.core5.http.protocol.HttpContext;
import org.apache.hc.core5.http.support.BasicRequestBuilder;

/**
 * An exec chain handler for Apache HttpClient 5's async client that runs every request through a
 * {@link ClientBudget} without blocking a thread: the request goes down the chain once its budgets
 * admit it (the wait runs on the engine's {@link dev.headroom.client.Scheduler}), the response's
 * RateLimit fields and Retry-After update the budgets (draft-ietf-httpapi-ratelimit-headers-09
 * section 7), and a refusal (429, or 503 with Retry-After) is read (bounded) instead of being handed
 * on, then sent again as the engine's {@link dev.headroom.client.RetryPolicy} says, or the exchange
 * fails with {@link RateLimitedException}. A request whose entity producer is not repeatable is never
 * sent twice.
 *
 * <pre>{@code
 * CloseableHttpAsyncClient http = BudgetAsyncExecChainHandler.install(HttpAsyncClients.custom(), budget).build();
 * }</pre>
 *
 * <p>{@link #install} puts the handler first and keeps the builder's own retry strategy to I/O
 * failures, as {@link BudgetExecChainHandler#install} does for the classic client. Thread-safe.
 */
public final class BudgetAsyncExecChainHandler implements AsyncExecChainHandler {

  /** The handler's name in the exec chain. */
  public static final String NAME = BudgetExecChainHandler.NAME;

  private final ClientBudget budget;

  private BudgetAsyncExecChainHandler(ClientBudget budget) {
    this.budget = budget;
  }

  /** A handler over the given engine; see {@link #install} for where it belongs. */
  public static BudgetAsyncExecChainHandler of(ClientBudget budget) {
    return new BudgetAsyncExecChainHandler(Objects.requireNonNull(budget, "budget"));
  }

  /**
   * Adds a handler over {@code budget} first in the builder's exec chain and sets a retry strategy
   * that retries I/O failures only (refusals are the handler's).
   */
  public static HttpAsyncClientBuilder install(HttpAsyncClientBuilder builder, ClientBudget budget) {
    Objects.requireNonNull(builder, "builder");
    return builder.addExecInterceptorFirst(NAME, of(budget)).setRetryStrategy(new DefaultHttpRequestRetryStrategy() {
      @Override
      public boolean retryRequest(HttpResponse response, int execCount, HttpContext context) {
        return false;
      }
    });
  }

  @Override
  public void execute(HttpRequest request, AsyncEntityProducer entity, AsyncExecChain.Scope scope,
      AsyncExecChain chain, AsyncExecCallback callback) throws HttpException, IOException {
    boolean replayable = entity == null || entity.isRepeatable();
    // Each attempt gets a fresh copy: the steps further down add fields to the request they are given.
    HttpRequest original = BasicRequestBuilder.copy(request).build();
    Map<String, List<String>> fields = fields(request.getHeaders());
    var view = ClientBudget.requestView(request.getMethod(), uri(request, scope), fields);
    CompletableFuture<Attempt> done = budget.executeAsync(view,
        budget.costOf(view, scope.clientContext.getAttribute(RequestCost.ATTRIBUTE)), replayable,
        new ClientBudget.AsyncTransport<Attempt>() {
          private boolean first = true;

          @Override
          public CompletableFuture<Attempt> send() {
            Attempt attempt = new Attempt(callback);
            HttpRequest next = first ? request : BasicRequestBuilder.copy(original).build();
            if (!first && entity != null) {
              entity.releaseResources(); // a repeatable producer starts again from the beginning
            }
            first = false;
            try {
              chain.proceed(next, entity, scope, attempt);
            } catch (HttpException | IOException | RuntimeException e) {
              attempt.sent.completeExceptionally(e);
            }
            return attempt.sent;
          }

          @Override
          public int status(Attempt attempt) {
            return attempt.response.getCode();
          }

          @Override
          public Map<String, ? extends Collection<String>> headers(Attempt attempt) {
            return fields(attempt.response.getHeaders());
          }

          @Override
          public CompletableFuture<byte[]> consumeRefusal(Attempt attempt, int maxBytes) {
            return attempt.refusal;
          }
        });
    done.whenComplete((attempt, error) -> {
      if (error != null) {
        callback.failed(error instanceof Exception e ? e : new IOException(error));
      }
    });
  }

  /**
   * One try down the chain. A response that is not a refusal goes to the caller's callback as it
   * arrives (after the engine has recorded it); a refusal's body is kept, at most
   * {@link ClientBudget#maxRefusalBytes()}, and nothing of it reaches the caller.
   */
  private final class Attempt implements AsyncExecCallback {
    final AsyncExecCallback caller;
    final CompletableFuture<Attempt> sent = new CompletableFuture<>();
    final CompletableFuture<byte[]> refusal = new CompletableFuture<>();
    volatile HttpResponse response;
    volatile boolean refused;

    Attempt(AsyncExecCallback caller) {
      this.caller = caller;
    }

    @Override
    public AsyncDataConsumer handleResponse(HttpResponse response, EntityDetails details)
        throws HttpException, IOException {
      this.response = response;
      this.refused = ClientBudget.isRefusal(response.getCode(), fields(response.getHeaders()));
      // Completing runs the engine's step at once: it records the answer (and, for anything but
      // a refusal, completes the exchange) before the body is passed on.
      sent.complete(this);
      if (!refused) {
        return caller.handleResponse(response, details);
      }
      if (details == null) {
        refusal.complete(new byte[0]);
        return null;
      }
      return new Bounded(refusal, budget.maxRefusalBytes());
    }

    @Override
    public void handleInformationResponse(HttpResponse response) throws HttpException, IOException {
      caller.handleInformationResponse(response);
    }

    @Override
    public void completed() {
      if (response != null && !refused) {
        caller.completed();
      } else {
        refusal.complete(new byte[0]); // no-op when the body already completed it
      }
    }

    @Override
    public void failed(Exception cause) {
      if (response == null) {
        sent.completeExceptionally(cause); // the engine releases the permit and fails the exchange
      } else if (!refused) {
        caller.failed(cause);
      } else {
        refusal.completeExceptionally(cause);
      }
    }
  }

  /** Keeps the first {@code max} bytes of a body and drops the rest. */
  private static final class Bounded implements AsyncDataConsumer {
    private final CompletableFuture<byte[]> result;
    private final int max;
    private final ByteArrayOutputStream kept = new ByteArrayOutputStream();

    Bounded(CompletableFuture<byte[]> result, int max) {
      this.result = result;
      this.max = max;
    }

    @Override
    public void updateCapacity(CapacityChannel channel) throws IOException {
      channel.update(Integer.MAX_VALUE);
    }

    @Override
    public void consume(ByteBuffer src) {
      int n = Math.min(src.remaining(), max - kept.size());
      if (n > 0) {
        byte[] chunk = new byte[n];
        src.get(chunk);
        kept.write(chunk, 0, n);
      }
      src.position(src.limit());
    }

    @Override
    public void streamEnd(List<? extends Header> trailers) {
      result.complete(kept.toByteArray());
    }

    @Override
    public void releaseResources() {
      result.complete(kept.toByteArray());
    }
  }

  private static URI uri(HttpRequest request, AsyncExecChain.Scope scope) throws IOException {
    try {
      URI uri = request.getUri();
      if (uri.isAbsolute()) {
        return uri;
      }
      return new URI(scope.route.getTargetHost().toURI() + request.getRequestUri());
    } catch (URISyntaxException e) {
      throw new ClientProtocolException("request URI: expected a valid URI, got " + request.getRequestUri(), e);
    }
  }

  private static Map<String, List<String>> fields(Header[] headers) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    for (Header h : headers) {
      out.computeIfAbsent(h.getName(), k -> new ArrayList<>()).add(h.getValue());
    }
    return out;
  }
}
