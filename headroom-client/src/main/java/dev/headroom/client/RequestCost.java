package dev.headroom.client;

import dev.headroom.http.headers.QuotaPolicyItem;
import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.TreeMap;

/**
 * What one request is expected to cost in the quota units a server meters besides requests: LLM
 * APIs meter {@code tokens} (or {@code input-tokens}, {@code output-tokens}) as well as requests.
 * A unit is named as the server names it: the {@code qu} of a
 * draft-ietf-httpapi-ratelimit-headers-09 quota policy (section 3.1, e.g.
 * {@code RateLimit-Policy: "tpm";q=1000;w=60;qu="tokens"}), or the unit a vendor dialect reports.
 *
 * <p>Every request costs one unit of each {@code requests} budget it draws on; a cost states the
 * others. A request is held until every budget of its scope allows it: a budget in unit {@code u}
 * when its remaining units cover the cost in {@code u} (at most its quota, so that a request dearer
 * than a whole window still goes once the window is fresh). The cost is counted down locally at
 * admission, and the books are corrected by what the server reports next: its {@code r} after the
 * request, less the expected cost of the requests still on the wire. A unit the cost does not state
 * costs nothing and does not hold the request (a refusal's Retry-After still holds the scope).
 *
 * <p>State it per request ({@link ClientBudget#acquire(java.net.http.HttpRequest, RequestCost)},
 * {@link HeadroomClient#send(java.net.http.HttpRequest, java.net.http.HttpResponse.BodyHandler,
 * RequestCost)}, or the attribute {@link #ATTRIBUTE} in the integrations: an OkHttp request tag of
 * type {@code RequestCost}, a Spring request attribute, an HttpClient 5 context attribute), or for
 * every request with {@link ClientBudget.Builder#cost}.
 *
 * <pre>{@code
 * RequestCost cost = RequestCost.of("tokens", promptTokens + maxTokens);
 * client.send(request, BodyHandlers.ofString(), cost);
 * }</pre>
 *
 * <p>Immutable; units compare without regard to case.
 */
public final class RequestCost {

  /** The name under which the integrations look for a request's cost (a request or context attribute). */
  public static final String ATTRIBUTE = RequestCost.class.getName();

  /** The unit every request costs one of, and which a cost therefore cannot state. */
  public static final String REQUESTS = "requests";

  /** The largest amount: a Structured Field Integer's fifteen digits (RFC 9651 section 3.3.1). */
  public static final long MAX_AMOUNT = 999_999_999_999_999L;

  private static final RequestCost NONE = new RequestCost(new TreeMap<>());

  private final Map<String, Long> amounts;

  private RequestCost(TreeMap<String, Long> amounts) {
    this.amounts = Collections.unmodifiableMap(amounts);
  }

  /** No cost beyond one request. */
  public static RequestCost none() {
    return NONE;
  }

  /**
   * {@code amount} units of {@code unit}.
   *
   * @throws IllegalArgumentException when the unit is not 1 to 64 printable ASCII characters, is
   *     {@value #REQUESTS}, or the amount is not 0 to {@value #MAX_AMOUNT}
   */
  public static RequestCost of(String unit, long amount) {
    return NONE.plus(unit, amount);
  }

  /** This cost and {@code amount} units of {@code unit} (replacing what this one says of it). */
  public RequestCost plus(String unit, long amount) {
    String u = unit(unit);
    if (amount < 0 || amount > MAX_AMOUNT) {
      throw new IllegalArgumentException("amount: expected 0 to " + MAX_AMOUNT + " " + u + ", got " + amount);
    }
    TreeMap<String, Long> next = new TreeMap<>(amounts);
    next.put(u, amount);
    return new RequestCost(next);
  }

  /** The amount stated in {@code unit}; empty when this cost does not state it. */
  public OptionalLong amount(String unit) {
    Objects.requireNonNull(unit, "unit");
    Long a = amounts.get(unit.toLowerCase(Locale.ROOT));
    return a == null ? OptionalLong.empty() : OptionalLong.of(a);
  }

  /** Every unit stated (lower case) and its amount. */
  public Map<String, Long> amounts() {
    return amounts;
  }

  /** Whether the cost states no unit. */
  public boolean isNone() {
    return amounts.isEmpty();
  }

  private static String unit(String unit) {
    Objects.requireNonNull(unit, "unit");
    boolean printable = !unit.isEmpty() && unit.length() <= 64 && unit.chars().allMatch(c -> c >= 0x21 && c <= 0x7e);
    if (!printable) {
      throw new IllegalArgumentException("unit: expected 1 to 64 printable ASCII characters, got '" + unit + "'");
    }
    String u = unit.toLowerCase(Locale.ROOT);
    if (u.equals(REQUESTS)) {
      throw new IllegalArgumentException("unit: every request costs one of '" + REQUESTS
          + "'; expected another unit (tokens, ...), got '" + unit + "'");
    }
    return u;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RequestCost c && amounts.equals(c.amounts);
  }

  @Override
  public int hashCode() {
    return amounts.hashCode();
  }

  @Override
  public String toString() {
    return "RequestCost" + amounts;
  }

  /** The unit a policy's quota counts, lower case: its {@code qu}, or requests without a policy. */
  static String unitOf(QuotaPolicyItem p) {
    return p == null ? REQUESTS : p.unit().toLowerCase(Locale.ROOT);
  }
}
