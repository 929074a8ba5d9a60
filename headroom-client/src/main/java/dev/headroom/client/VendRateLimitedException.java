package dev.headroom.client;

import dev.headroom.vend.format.VendError;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The client gave up on a refused vend call (seed 003, "Handling RATE_LIMITED"): retry was off
 * ({@link VendClientOptions#retry()}), or {@link VendClientOptions#maxAttempts()} tries were
 * refused. Adds to {@link RateLimitedException} the vend {@code RATE_LIMITED} error of the last
 * refusal (code, message, retryable, details with {@code retry_after}, {@code scope}, ...) and
 * the budgets its extension data reported.
 */
public final class VendRateLimitedException extends RateLimitedException {
  private static final long serialVersionUID = 1L;

  VendRateLimitedException(Exchange exchange, int attempts, String reason) {
    super(exchange, attempts, reason + exchange.vend().flatMap(VendReading::rateLimited)
        .map(e -> "; vend " + e).orElse(""));
  }

  /** The {@code RATE_LIMITED} error of the last refusal; empty when the 429 carried no vend envelope. */
  public Optional<VendError> vendError() {
    return exchange().vend().flatMap(VendReading::rateLimited);
  }

  /**
   * The extension data of the last refusal, one budget per scope, as the client recorded it
   * (policy {@code vend:<scope>} or {@code vend:function:<function>}, remaining, reset, quota, window).
   */
  public List<Budget> extensionData() {
    return exchange().vend().map(r -> r.limits().stream()
        .map(l -> new Budget(l.policy(), Optional.empty(), l.remaining(), l.resetsIn(),
            OptionalLong.of(l.limit()), l.window(), "vend"))
        .toList()).orElse(List.of());
  }
}
