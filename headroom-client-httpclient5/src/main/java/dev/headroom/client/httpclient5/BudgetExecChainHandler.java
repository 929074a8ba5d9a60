package dev.headroom.client.httpclient5;

import dev.headroom.client.BudgetWaitException;
import dev.headroom.client.ClientBudget;
import dev.headroom.client.RateLimitedException;
import dev.headroom.client.RequestCost;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.hc.client5.http.ClientProtocolException;
import org.apache.hc.client5.http.classic.ExecChain;
import org.apache.hc.client5.http.classic.ExecChainHandler;
import org.apache.hc.client5.http.impl.DefaultHttpRequestRetryStrategy;
import org.apache.hc.client5.http.impl.classic.HttpClientBuilder;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpEntity;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.HttpResponse;
import org.apache.hc.core5.http.io.support.ClassicRequestBuilder;
import org.apache.hc.core5.http.protocol.HttpContext;

/**
 * An exec chain handler for Apache HttpClient 5's classic client that runs every request through a
 * {@link ClientBudget}: the request waits on the calling thread until its budgets admit it (at
 * most the engine's {@link ClientBudget#maxWait()}, then {@link BudgetWaitException}), the
 * response's RateLimit fields and Retry-After update the budgets
 * (draft-ietf-httpapi-ratelimit-headers-09 section 7), and a refusal (429, or 503 with
 * Retry-After) is sent again with {@code chain.proceed} as the engine's
 * {@link dev.headroom.client.RetryPolicy} says, or ends the request with {@link RateLimitedException}.
 * A request whose entity is not {@linkplain HttpEntity#isRepeatable() repeatable} is never sent twice.
 *
 * <pre>{@code
 * CloseableHttpClient http = BudgetExecChainHandler.install(HttpClients.custom(), budget).build();
 * }</pre>
 *
 * <p>A request expected to cost more than one request in a unit the server meters (tokens, ...)
 * says so with a context attribute: {@code context.setAttribute(RequestCost.ATTRIBUTE,
 * RequestCost.of("tokens", 1200))}; without one, the engine's {@link ClientBudget.Builder#cost}
 * decides ({@link RequestCost}).
 *
 * <p>{@link #install} puts the handler first in the chain (so it sees each request once, before
 * redirects) and replaces the builder's retry strategy with one that still retries I/O failures of
 * idempotent requests but leaves 429 and 503 to the engine: HttpClient's default strategy would
 * otherwise retry them inside the chain, unpaced.
 *
 * <p>Thread-safe; share one engine across clients to share the budgets.
 */
public final class BudgetExecChainHandler implements ExecChainHandler {

  /** The handler's name in the exec chain. */
  public static final String NAME = "headroom-budget";

  private final ClientBudget budget;

  private BudgetExecChainHandler(ClientBudget budget) {
    this.budget = budget;
  }

  /** A handler over the given engine; see {@link #install} for where it belongs. */
  public static BudgetExecChainHandler of(ClientBudget budget) {
    return new BudgetExecChainHandler(Objects.requireNonNull(budget, "budget"));
  }

  /**
   * Adds a handler over {@code budget} first in the builder's exec chain and sets a retry strategy
   * that retries I/O failures only (refusals are the handler's).
   */
  public static HttpClientBuilder install(HttpClientBuilder builder, ClientBudget budget) {
    Objects.requireNonNull(builder, "builder");
    return builder.addExecInterceptorFirst(NAME, of(budget)).setRetryStrategy(new DefaultHttpRequestRetryStrategy() {
      @Override
      public boolean retryRequest(HttpResponse response, int execCount, HttpContext context) {
        return false;
      }
    });
  }

  @Override
  public ClassicHttpResponse execute(ClassicHttpRequest request, ExecChain.Scope scope, ExecChain chain)
      throws IOException, HttpException {
    HttpEntity entity = request.getEntity();
    boolean replayable = entity == null || entity.isRepeatable();
    // Each attempt gets a fresh copy: the steps further down add fields (Host, Content-Length) to
    // the request they are given and refuse to add them twice.
    ClassicHttpRequest original = ClassicRequestBuilder.copy(request).build();
    var view = ClientBudget.requestView(request.getMethod(), uri(request, scope), fields(request.getHeaders()));
    return budget.execute(view, budget.costOf(view, scope.clientContext.getAttribute(RequestCost.ATTRIBUTE)),
        replayable, new ClientBudget.Transport<ClassicHttpResponse>() {
          private boolean first = true;

          @Override
          public ClassicHttpResponse send() throws IOException {
            ClassicHttpRequest attempt = first ? request : ClassicRequestBuilder.copy(original).build();
            first = false;
            try {
              return chain.proceed(attempt, scope);
            } catch (HttpException e) {
              throw new ClientProtocolException(e.getMessage(), e);
            }
          }

          @Override
          public int status(ClassicHttpResponse response) {
            return response.getCode();
          }

          @Override
          public Map<String, ? extends Collection<String>> headers(ClassicHttpResponse response) {
            return fields(response.getHeaders());
          }

          @Override
          public byte[] consumeRefusal(ClassicHttpResponse response, int maxBytes) throws IOException {
            try (response) {
              HttpEntity body = response.getEntity();
              if (body == null) {
                return new byte[0];
              }
              try (InputStream in = body.getContent()) {
                return in.readNBytes(maxBytes);
              }
            }
          }
        });
  }

  private static URI uri(ClassicHttpRequest request, ExecChain.Scope scope) throws IOException {
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
