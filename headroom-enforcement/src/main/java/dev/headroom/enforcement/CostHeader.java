package dev.headroom.enforcement;

import dev.headroom.http.body.Refusal;
import dev.headroom.http.body.RefusalFormat;
import java.net.URI;
import java.util.List;
import java.util.OptionalLong;

/**
 * A request's cost as it states it in a header (a route's {@code cost.header}), read the same way
 * by every front end: one field line, a whole number from 0 to the route's maximum, bounded before
 * it is converted (wire numbers are untrusted; no overflow). What a front end answers to a value
 * that is not valid is 400 with {@link #ERROR}, {@link #detail}, {@link #WHY} and the class fields
 * {@code field} and {@code expected} (Graceful Boundaries section 6).
 */
public final class CostHeader {
  /** The {@code error} of a refused cost. */
  public static final String ERROR = "invalid_cost";

  /** The {@code why} of a refused cost. */
  public static final String WHY =
      "A request states its own cost within a bound, so that no request can claim more of the quota than it may.";

  private CostHeader() {}

  /** The cost the field lines state: one line, a whole number from 0 to {@code max}; otherwise empty. */
  public static OptionalLong parse(List<String> values, long max) {
    if (values.size() != 1) {
      return OptionalLong.empty();
    }
    return parse(values.get(0), max);
  }

  /** A whole number from 0 to {@code max}, or empty. */
  public static OptionalLong parse(String value, long max) {
    String t = value.strip();
    if (t.isEmpty() || t.length() > 18 || !t.chars().allMatch(c -> c >= '0' && c <= '9')) {
      return OptionalLong.empty();
    }
    long n = Long.parseLong(t);
    return n <= max ? OptionalLong.of(n) : OptionalLong.empty();
  }

  /** A request's cost on {@code route}: its cost header's, or the route's without one; empty when the header is not valid. */
  static OptionalLong cost(GateRequest request, RouteRules route) {
    if (route.costHeader().isEmpty()) {
      return OptionalLong.of(route.cost());
    }
    List<String> values = request.headers(route.costHeader().get());
    if (values.isEmpty()) {
      return OptionalLong.of(route.cost());
    }
    return parse(values, route.maxCost());
  }

  /** 400 {@code invalid_cost} naming the header and the range (Graceful Boundaries section 6); {@code origin} may be null. */
  static GateResponse refusal(GateRequest request, RouteRules route, URI origin) {
    String header = route.costHeader().orElseThrow();
    Refusal refusal = Refusal.builder(400).error(ERROR).detail(detail(header)).why(WHY).field(header)
        .expected(expected(header, route.maxCost())).origin(origin).build();
    RefusalFormat format = RefusalFormat.negotiate(request.header("Accept"));
    return GateResponses.refusal(400, List.of(), format, format.body(refusal, null), GateResponses.problem(refusal), null);
  }

  /** The {@code detail} of a refused cost. */
  public static String detail(String header) {
    return "The request's " + header + " field does not state a cost this route accepts.";
  }

  /** The {@code expected} of a refused cost. */
  public static String expected(String header, long max) {
    return "One " + header + " field with a whole number from 0 to " + max + ".";
  }
}
