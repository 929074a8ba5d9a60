package dev.headroom.gateway.internal.proxy;

import dev.headroom.Decision;
import dev.headroom.QuotaLimiter;
import dev.headroom.enforcement.Verdict;
import dev.headroom.http.headers.RateLimitHeaders;
import java.util.List;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What an {@link ProxyExchange} owes its store once it ends, and the RateLimit fields its response
 * carries: the gate's admission (headroom-enforcement's {@code Admission}: counts, charges and leases of the
 * route's policies) or a vend call's decision (its leases). Made where the decision is taken (the
 * gate's verdict, {@link VendCall}); told the response's status and charge header when its head
 * arrives; settled once, without blocking, when the exchange ends: an exchange whose response never
 * came counts in full, since nothing is given back on doubt.
 *
 * <p>Confined to the exchange's event loop.
 */
final class Accounting {
  private static final Logger LOG = LoggerFactory.getLogger(Accounting.class);

  /** The gate's verdict when it admitted the request; null for a vend call. */
  private final Verdict admitted;
  /** A vend call's decision; null for a request the gate admitted. */
  private final Decision vendDecision;
  private final RateLimitHeaders vendFields;
  /** The response's status once its head came; -1 before. */
  private int status = -1;
  /** The values of the route's charge header in the response ({@code cost.chargeHeader}). */
  private List<String> chargeValues = List.of();

  private Accounting(Verdict admitted, Decision vendDecision, RateLimitHeaders vendFields) {
    this.admitted = admitted;
    this.vendDecision = vendDecision;
    this.vendFields = vendFields;
  }

  /** A request the gate admitted ({@link Verdict.Kind#ADMIT}). */
  static Accounting admitted(Verdict v) {
    return new Accounting(v, null, null);
  }

  /** A vend call's decision, whose fields are written by the route's {@code fields}. */
  static Accounting vend(Decision d, RateLimitHeaders fields) {
    return new Accounting(null, d, fields);
  }

  /** The response head came with {@code status}; {@code charge} is its charge header's value, or null. */
  void response(int status, String charge) {
    this.status = status;
    this.chargeValues = charge == null ? List.of() : List.of(charge);
  }

  /**
   * Whether the route's adaptive limit learns from this request's upstream latency
   * ({@link #upstreamLatency}).
   */
  boolean learns() {
    return admitted != null && admitted.admission().learns();
  }

  /**
   * The upstream took {@code latencyNanos} from the request's sending to its response head, of
   * which {@code ownDelayNanos} was the event loop's own delay: the adaptive limit's sample.
   */
  void upstreamLatency(long latencyNanos, long ownDelayNanos) {
    if (admitted != null) {
      admitted.admission().upstreamLatency(latencyNanos, ownDelayNanos);
    }
  }

  /** Writes the RateLimit fields of the decision for a response of {@code status}. */
  void writeFields(int status, BiConsumer<String, String> sink) {
    if (admitted != null) {
      admitted.admission().writeFields(status, sink);
    } else {
      vendFields.write(vendDecision, status, sink);
    }
  }

  /** Settles once, without blocking; {@code bytes} are the request and response body bytes transferred. */
  void settle(QuotaLimiter limiter, long bytes) {
    if (admitted != null) {
      if (status >= 0) {
        admitted.admission().completeAsync(status, bytes, chargeValues);
      } else {
        admitted.admission().unansweredAsync(bytes);
      }
      return;
    }
    limiter.releaseAsync(vendDecision).whenComplete((v, e) -> {
      if (e != null) {
        LOG.warn("could not release the leases of a vend call: {}", e.toString());
      }
    });
  }
}
