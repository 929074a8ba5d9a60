package dev.headroom.client;

import dev.headroom.http.body.Refusal;
import dev.headroom.http.headers.RateLimitFields;
import java.net.URI;
import java.net.http.HttpHeaders;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/**
 * A blocking front end of {@link ClientBudget} gave up waiting for its budgets: the request was not
 * admitted within {@link ClientBudget.Builder#maxWait(Duration)} and was never sent. There is no
 * refusal: {@link #exchange()} is null, {@link #status()} is 0, {@link #attempts()} is 0 and the
 * headers, fields and refusal are empty.
 */
public final class BudgetWaitException extends RateLimitedException {
  private static final long serialVersionUID = 1L;

  private static final RateLimitFields NONE = RateLimitFields.parse(Map.of(), Instant.EPOCH);

  private final URI uri;
  private final Duration maxWait;

  BudgetWaitException(String method, URI uri, Duration maxWait) {
    super(method + " " + uri + ": not admitted by the budgets within maxWait " + maxWait + "; not sent");
    this.uri = uri;
    this.maxWait = maxWait;
  }

  /** The wait that was exceeded. */
  public Duration maxWait() {
    return maxWait;
  }

  /** Null: nothing was sent. */
  @Override
  public Exchange exchange() {
    return null;
  }

  /** 0: nothing was sent, so nothing answered. */
  @Override
  public int status() {
    return 0;
  }

  @Override
  public URI uri() {
    return uri;
  }

  @Override
  public HttpHeaders headers() {
    return HttpHeaders.of(Map.of(), (a, b) -> true);
  }

  @Override
  public Optional<Refusal> refusal() {
    return Optional.empty();
  }

  @Override
  public RateLimitFields fields() {
    return NONE;
  }

  @Override
  public Optional<Duration> retryAfter() {
    return Optional.empty();
  }
}
