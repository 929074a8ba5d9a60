package dev.headroom.http.body;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.net.URI;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The rules a {@link Refusal.Builder} is held to: {@link #check} for {@link Refusal.Builder#build()}
 * (the core fields on every status, {@code limit} and {@code retryAfterSeconds} on 429,
 * {@code allowedMethods} on 405, the security considerations a program can check through
 * {@link OperatorTextChecks}, extension values), each refused with a message naming the field, the value and
 * what is expected; and {@link #readIssues} for a refusal read by {@link RefusalReader}, which
 * lists what the body lacks instead of refusing it. Stateless.
 */
final class RefusalRules {
  private RefusalRules() {}

  /**
   * Validates a builder before it builds; sets the about:blank title (RFC 9457 section 4.2.1)
   * when neither type nor title is given.
   *
   * @throws IllegalArgumentException naming the field, the value and what is expected
   */
  static void check(Refusal.Builder b) {
    if (b.status < 400 || b.status > 599) {
      throw new IllegalArgumentException("status: expected a non-success status from 400 to 599, got " + b.status);
    }
    String where = "refusal " + b.status + ": ";
    URI o = OperatorTextChecks.origin(where + "origin", b.origin);
    OperatorTextChecks.errorToken(where + "error", b.error);
    OperatorTextChecks.require(where + "detail", b.detail, OperatorTextChecks.MAX_TEXT);
    if (b.title == null && b.type == null) {
      b.title = ReasonPhrase.of(b.status);
    }
    OperatorTextChecks.optional(where + "title", b.title, OperatorTextChecks.MAX_SHORT);
    OperatorTextChecks.optional(where + "limit", b.limit, OperatorTextChecks.MAX_SHORT);
    OperatorTextChecks.why(where + "why", b.why, b.detail, b.limit, b.title, b.error.replace('_', ' '));
    OperatorTextChecks.uriReference(where + "type", b.type, true);
    OperatorTextChecks.uriReference(where + "instance", b.instance, false);
    if (b.status == 429) {
      if (b.limit == null) {
        throw new IllegalArgumentException(where + "limit: required on 429 (Graceful Boundaries section 2), "
            + "expected the limit in concrete terms such as '10 requests per hour per client address', got nothing");
      }
      if (b.retryAfterSeconds == null) {
        throw new IllegalArgumentException(where + "retryAfterSeconds: required on 429 (Graceful Boundaries "
            + "section 2), expected whole seconds, got nothing");
      }
      if (!b.detail.chars().anyMatch(Character::isDigit)) {
        throw new IllegalArgumentException(where + "detail: on 429 it must state the wait (Graceful Boundaries "
            + "section 2), e.g. 'Try again in 42 seconds.', got '" + OperatorTextChecks.printable(b.detail) + "'");
      }
    }
    if (b.retryAfterSeconds != null && b.retryAfterSeconds < 0) {
      throw new IllegalArgumentException(where + "retryAfterSeconds: expected a non-negative integer, got "
          + b.retryAfterSeconds);
    }
    if (b.limitId != null && (b.limitId.isEmpty() || b.limitId.length() > 128)) {
      throw new IllegalArgumentException(where + "limitId: expected 1 to 128 characters, got '"
          + OperatorTextChecks.printable(b.limitId) + "'");
    }
    OperatorTextChecks.optional(where + "limitId", b.limitId, 128);
    if (b.limitType != null) {
      LimitType.of(b.limitType);
    }
    if (b.scope != null && !b.scope.matches("[a-z][a-z0-9-]{0,31}")) {
      throw new IllegalArgumentException(where + "scope: expected a lowercase token such as ip, key, user, "
          + "resource or global, got '" + OperatorTextChecks.printable(b.scope) + "'");
    }
    if (b.violatedPolicies.size() > 64) {
      throw new IllegalArgumentException(where + "violated-policies: expected at most 64 names, got "
          + b.violatedPolicies.size());
    }
    for (String p : b.violatedPolicies) {
      OperatorTextChecks.require(where + "violated-policies", p, 64);
    }
    OperatorTextChecks.url(where + "cachedResultUrl", b.cachedResultUrl, true, o);
    OperatorTextChecks.url(where + "alternativeEndpoint", b.alternativeEndpoint, true, o);
    OperatorTextChecks.url(where + "scanUrl", b.scanUrl, true, o);
    OperatorTextChecks.url(where + "upgradeUrl", b.upgradeUrl, false, o);
    OperatorTextChecks.url(where + "humanUrl", b.humanUrl, false, o);
    OperatorTextChecks.url(where + "authUrl", b.authUrl, false, o);
    OperatorTextChecks.url(where + "statusUrl", b.statusUrl, false, o);
    OperatorTextChecks.optional(where + "field", b.field, OperatorTextChecks.MAX_SHORT);
    OperatorTextChecks.expected(where + "expected", b.expected);
    if (b.status == 405 && (b.allowedMethods == null || b.allowedMethods.isEmpty())) {
      throw new IllegalArgumentException(where + "allowedMethods: required on 405 (Graceful Boundaries section 6, "
          + "input class), expected the accepted methods such as [GET, HEAD], got nothing");
    }
    if (b.allowedMethods != null) {
      for (String m : b.allowedMethods) {
        if (m == null || !m.matches("[A-Za-z0-9!#$%&'*+.^_`|~-]{1,32}")) {
          throw new IllegalArgumentException(where + "allowedMethods: expected method tokens such as GET, got "
              + (m == null ? "null" : "'" + OperatorTextChecks.printable(m) + "'"));
        }
      }
    }
    if (b.extensions.size() > Refusal.MAX_EXTENSIONS) {
      throw new IllegalArgumentException(where + "extensions: expected at most " + Refusal.MAX_EXTENSIONS + " members, got "
          + b.extensions.size());
    }
    for (Map.Entry<String, Object> e : b.extensions.entrySet()) {
      String name = e.getKey();
      if (name == null || name.isEmpty() || name.length() > 64 || Refusal.MEMBERS.contains(name)) {
        throw new IllegalArgumentException(where + "extension: expected a name of 1 to 64 characters that is not one "
            + "of the defined members, got " + (name == null ? "null" : "'" + OperatorTextChecks.printable(name) + "'"));
      }
      OperatorTextChecks.require(where + "extension name", name, 64);
      checkValue(where + "extension '" + name + "'", e.getValue(), 0);
    }
  }

  /** Adds to {@code issues} the Graceful Boundaries requirements a read refusal does not meet. */
  static void readIssues(Refusal.Builder b, List<String> issues) {
    if (b.error == null) {
      issues.add("error: missing; every non-success response needs it (Graceful Boundaries section 6)");
    } else if (!b.error.matches("[a-z0-9_]+")) {
      issues.add("error: expected a snake_case token, got '" + OperatorTextChecks.printable(b.error) + "'");
    }
    if (b.detail == null || b.detail.isEmpty()) {
      issues.add("detail: missing; every non-success response needs it (Graceful Boundaries section 6)");
    }
    if (b.why == null || b.why.isEmpty()) {
      issues.add("why: missing; every non-success response needs it (Graceful Boundaries section 6)");
    }
    if (b.status == 429) {
      if (b.limit == null) {
        issues.add("limit: missing; every 429 needs it (Graceful Boundaries section 2)");
      }
      if (b.retryAfterSeconds == null) {
        issues.add("retryAfterSeconds: missing; every 429 needs it (Graceful Boundaries section 2)");
      }
    }
    Map<String, Object> texts = new LinkedHashMap<>();
    texts.put("title", b.title);
    texts.put("detail", b.detail);
    texts.put("why", b.why);
    texts.put("limit", b.limit);
    texts.put("expected", b.expected);
    texts.put("cachedResultUrl", b.cachedResultUrl);
    texts.put("alternativeEndpoint", b.alternativeEndpoint);
    texts.put("upgradeUrl", b.upgradeUrl);
    texts.put("humanUrl", b.humanUrl);
    b.extensions.forEach(texts::put);
    texts.forEach((field, value) -> instructions(field, value, issues, 0));
  }

  /** SC-16 in a read body: every string, extensions included, stays declarative. */
  private static void instructions(String field, Object value, List<String> issues, int depth) {
    if (value instanceof String s) {
      OperatorTextChecks.instruction(s).ifPresent(phrase -> issues.add(field + ": '" + phrase
          + "' instructs the caller instead of informing it; guidance must stay declarative (Graceful Boundaries SC-16)"));
    } else if (value instanceof List<?> l && depth < 8) {
      l.forEach(o -> instructions(field, o, issues, depth + 1));
    } else if (value instanceof Map<?, ?> m && depth < 8) {
      m.forEach((k, v) -> instructions(field + "." + k, v, issues, depth + 1));
    }
  }

  private static void checkValue(String field, Object v, int depth) {
    if (depth > 8) {
      throw new IllegalArgumentException(field + ": expected at most 8 levels of nesting");
    }
    if (v == null || v instanceof String || v instanceof Boolean || v instanceof Long || v instanceof Integer
        || v instanceof BigInteger || v instanceof BigDecimal) {
      return;
    }
    if (v instanceof Double) {
      if (((Double) v).isNaN() || ((Double) v).isInfinite()) {
        throw new IllegalArgumentException(field + ": expected a finite number, got " + v);
      }
      return;
    }
    if (v instanceof List) {
      for (Object o : (List<?>) v) {
        checkValue(field, o, depth + 1);
      }
      return;
    }
    if (v instanceof Map) {
      for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
        if (!(e.getKey() instanceof String)) {
          throw new IllegalArgumentException(field + ": expected String keys, got " + e.getKey());
        }
        checkValue(field, e.getValue(), depth + 1);
      }
      return;
    }
    throw new IllegalArgumentException(field + ": expected a String, Boolean, number, List or Map, got "
        + v.getClass().getName());
  }
}
