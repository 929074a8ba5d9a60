package dev.headroom.client;

import dev.headroom.http.body.Refusal;
import dev.headroom.http.headers.RateLimitFields;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpHeaders;
import java.time.Duration;
import java.util.Optional;

/**
 * The client gave up on a refused request: the method may not be retried, the attempts ran out,
 * or the caller asked for no retries. Carries what the last refusal said: its status, the parsed
 * RateLimit fields and Retry-After, and the refusal body (problem type, {@code why}, guidance)
 * when it could be read. {@link VendRateLimitedException} adds the vend error of a vend call.
 */
public class RateLimitedException extends IOException {
  private static final long serialVersionUID = 1L;

  private final transient Exchange exchange;
  private final int attempts;

  RateLimitedException(Exchange exchange, int attempts, String reason) {
    super(message(exchange, attempts, reason));
    this.exchange = exchange;
    this.attempts = attempts;
  }

  /**
   * For {@link BudgetWaitException}: the client gave up before sending, so there is no refusal;
   * that subclass answers every accessor without one.
   */
  RateLimitedException(String message) {
    super(message);
    this.exchange = null;
    this.attempts = 0;
  }

  /** Public so that interceptors outside this package can give up the same way. */
  public static RateLimitedException of(Exchange exchange, int attempts, String reason) {
    return new RateLimitedException(exchange, attempts, reason);
  }

  private static String message(Exchange e, int attempts, String reason) {
    StringBuilder sb = new StringBuilder();
    sb.append(e.request().method()).append(' ').append(e.request().uri()).append(": refused with ")
        .append(e.status()).append(" after ").append(attempts).append(attempts == 1 ? " attempt" : " attempts")
        .append(" (").append(reason).append(')');
    e.retryAfter().ifPresent(d -> sb.append("; Retry-After ").append(d.toSeconds()).append('s'));
    e.refusal().ifPresent(r -> {
      r.error().ifPresent(v -> sb.append("; error ").append(v));
      r.detail().ifPresent(v -> sb.append("; detail: ").append(v));
    });
    return sb.toString();
  }

  /** The last refused exchange. */
  public Exchange exchange() {
    return exchange;
  }

  /** The HTTP status of the last refusal (429 or 503). */
  public int status() {
    return exchange.status();
  }

  /** The URI of the last refused request. */
  public URI uri() {
    return exchange.request().uri();
  }

  /** The headers of the last refusal. */
  public HttpHeaders headers() {
    return exchange.response().headers();
  }

  /** The refusal body, when it was problem details or a Graceful Boundaries refusal. */
  public Optional<Refusal> refusal() {
    return exchange.refusal();
  }

  /** The RateLimit fields of the last refusal (empty when it came from a cache). */
  public RateLimitFields fields() {
    return exchange.fields();
  }

  /** Retry-After of the last refusal. */
  public Optional<Duration> retryAfter() {
    return exchange.retryAfter();
  }

  /** Tries made, the first included. */
  public int attempts() {
    return attempts;
  }
}
