package dev.headroom.gateway.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.gateway.GatewayConfig;
import dev.headroom.gateway.GatewayConfig.Policy;
import dev.headroom.gateway.GatewayConfig.Route;
import dev.headroom.gateway.internal.HttpSpeech.Discovery;
import dev.headroom.gateway.internal.HttpSpeech.GatewayError;
import dev.headroom.gateway.internal.HttpSpeech.Refusal;
import dev.headroom.http.partition.PartitionKeyDerivation;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * SEAM(headroom-http bodies): the refusal and error bodies (RFC 9457 problem details that are at
 * once Graceful Boundaries refusals), their HTML rendering, and the discovery document with its
 * ETag. These belong to headroom-http's body and discovery packages (branch http-bodies), which
 * had not landed when the gateway was written; this class is the single place the gateway builds
 * them, and is to be replaced by delegation to those packages when they merge. It writes the
 * fields both specifications require and nothing more.
 *
 * <p>Immutable and thread-safe.
 */
final class Bodies {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String PROBLEM_TYPES = "https://iana.org/assignments/http-problem-types#";

  private final GatewayConfig config;
  private final Map<String, PartitionKeyDerivation> derivations;

  Bodies(GatewayConfig config, Map<String, PartitionKeyDerivation> derivations) {
    this.config = config;
    this.derivations = derivations;
  }

  /** Whether an Accept field prefers text/html to JSON. */
  static boolean prefersHtml(String accept) {
    String a = accept.toLowerCase(Locale.ROOT);
    int html = a.indexOf("text/html");
    if (html < 0) {
      return false;
    }
    int json = a.indexOf("json");
    return json < 0 || html < json;
  }

  LocalResponse refusal(Refusal r, boolean html) {
    Policy p = r.policy();
    QuotaPolicy q = p.quota();
    PolicyOutcome outcome = r.decision() == null ? null
        : r.decision().outcomes().stream().filter(o -> o.policy().name().equals(p.name())).findFirst().orElse(null);
    QuotaPolicy enforced = outcome == null ? q : outcome.policy();
    HttpResponseStatus status;
    String type;
    String title;
    String error;
    String detail;
    long wait = r.retryAfterSeconds();
    switch (r.kind()) {
      case TEMPORARY_REDUCED_CAPACITY -> {
        status = HttpResponseStatus.SERVICE_UNAVAILABLE;
        type = "temporary-reduced-capacity";
        title = "Temporary reduced capacity";
        error = "temporary_reduced_capacity";
        detail = "Capacity is temporarily reduced to " + enforced.quota() + " " + unitWords(enforced)
            + ". Try again in " + wait + " seconds.";
      }
      case ABNORMAL_USAGE_DETECTED -> {
        status = HttpResponseStatus.TOO_MANY_REQUESTS;
        type = "abnormal-usage-detected";
        title = "Abnormal usage detected";
        error = "abnormal_usage_detected";
        detail = "Requests kept arriving while this client was asked to wait, so it is blocked. Try again in "
            + wait + " seconds. Continued requests during the block do not shorten it.";
      }
      default -> {
        status = HttpResponseStatus.TOO_MANY_REQUESTS;
        type = "quota-exceeded";
        title = "Quota exceeded";
        error = "rate_limit_exceeded";
        detail = "The limit of " + limitText(enforced) + " is reached. Try again in " + wait + " seconds."
            + (p.escalation().isPresent() ? " Continued requests during the wait will extend the block." : "");
      }
    }
    ObjectNode b = JSON.createObjectNode();
    b.put("type", PROBLEM_TYPES + type);
    b.put("title", title);
    b.put("status", status.code());
    b.put("detail", detail);
    b.put("instance", r.path());
    ArrayNode violated = b.putArray("violated-policies");
    if (r.decision() != null) {
      r.decision().violated().forEach(o -> violated.add(o.policy().name()));
    } else {
      violated.add(p.name());
    }
    b.put("error", error);
    b.put("limit", limitText(enforced));
    b.put("retryAfterSeconds", wait);
    b.put("limitId", p.name());
    b.put("limitType", limitType(p));
    b.put("scope", derivations.get(p.name()).scope().token());
    b.put("why", p.why());
    p.guidance().forEach(b::put);
    if (html) {
      return html(status, title, b, wait);
    }
    return new LocalResponse(status, "application/problem+json", bytes(b));
  }

  LocalResponse error(GatewayError e, boolean html) {
    HttpResponseStatus status = HttpResponseStatus.valueOf(e.status());
    ObjectNode b = JSON.createObjectNode();
    b.put("type", "about:blank");
    b.put("title", status.reasonPhrase());
    b.put("status", e.status());
    b.put("error", e.error());
    b.put("detail", e.detail());
    b.put("why", e.why());
    e.extra().forEach((k, v) -> b.set(k, JSON.valueToTree(v)));
    if (html) {
      return html(status, status.reasonPhrase(), b, -1);
    }
    return new LocalResponse(status, "application/problem+json", bytes(b));
  }

  Discovery discovery(Map<String, Long> effectiveQuotas, Set<String> reduced) {
    ObjectNode doc = JSON.createObjectNode();
    doc.put("service", config.service().name());
    doc.put("description", config.service().description());
    // Level 4: structured refusals (1), this document (2), guidance when configured (3), headers (4).
    boolean guidance = config.policies().values().stream().anyMatch(p -> !p.guidance().isEmpty());
    doc.put("conformance", guidance ? "level-4" : "level-2");
    config.service().changelog().ifPresent(v -> doc.put("changelog", v));
    config.service().feed().ifPresent(v -> doc.put("feed", v));
    ObjectNode limits = doc.putObject("limits");
    for (Route r : config.routes()) {
      for (String method : new java.util.TreeSet<>(r.methods())) {
        String key = r.methods().size() == 1 ? r.name() : r.name() + "-" + method.toLowerCase(Locale.ROOT);
        ObjectNode e = limits.putObject(key);
        e.put("endpoint", r.path());
        e.put("method", method);
        ArrayNode list = e.putArray("limits");
        for (String name : r.policies()) {
          Policy p = config.policies().get(name);
          long quota = effectiveQuotas.getOrDefault(name, p.quota().quota());
          ObjectNode l = list.addObject();
          l.put("type", limitType(p));
          l.put("limitId", p.name());
          l.put("scope", derivations.get(p.name()).scope().token());
          if (p.quota().unit() == QuotaUnit.CONTENT_BYTES) {
            l.put("costMetric", "bytes");
          }
          l.put("maxRequests", quota);
          l.put("windowSeconds", p.quota().windowSeconds());
          l.put("description", p.description().orElse(limitText(p.quota().toBuilder().quota(quota).build()))
              + (reduced.contains(name) ? " Temporarily reduced to " + quota + "." : ""));
        }
      }
    }
    byte[] json = bytes(doc);
    return new Discovery(json, etag(json));
  }

  private String limitType(Policy p) {
    if (p.limitType().isPresent()) {
      return p.limitType().get();
    }
    if (p.quota().unit() == QuotaUnit.CONCURRENT_REQUESTS) {
      return "concurrency";
    }
    if (p.quota().unit() == QuotaUnit.CONTENT_BYTES) {
      return "cost-limit";
    }
    return switch (derivations.get(p.name()).scope()) {
      case IP -> "ip-rate";
      case KEY -> "key-rate";
      case USER -> "user-rate";
      default -> "global-rate";
    };
  }

  private String limitText(QuotaPolicy q) {
    String per = switch (derivations.get(q.name()).scope()) {
      case IP -> " per client IP";
      case KEY -> " per API key";
      case USER -> " per user";
      default -> "";
    };
    if (q.unit() == QuotaUnit.CONCURRENT_REQUESTS) {
      return q.quota() + " concurrent requests" + per;
    }
    return q.quota() + " " + unitWords(q) + per + " per " + window(q.windowSeconds());
  }

  private static String unitWords(QuotaPolicy q) {
    return switch (q.unit()) {
      case REQUESTS -> q.quota() == 1 ? "request" : "requests";
      case CONTENT_BYTES -> "bytes";
      case CONCURRENT_REQUESTS -> "concurrent requests";
    };
  }

  private static String window(long s) {
    if (s == 86400) {
      return "day";
    }
    if (s == 3600) {
      return "hour";
    }
    if (s == 60) {
      return "minute";
    }
    if (s == 1) {
      return "second";
    }
    if (s % 86400 == 0) {
      return (s / 86400) + " days";
    }
    if (s % 3600 == 0) {
      return (s / 3600) + " hours";
    }
    if (s % 60 == 0) {
      return (s / 60) + " minutes";
    }
    return s + " seconds";
  }

  private static LocalResponse html(HttpResponseStatus status, String title, ObjectNode b, long retryAfter) {
    StringBuilder sb = new StringBuilder();
    sb.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    if (retryAfter >= 0) {
      sb.append("<meta name=\"retry-after\" content=\"").append(retryAfter).append("\">\n");
    }
    if (b.hasNonNull("instance")) {
      sb.append("<link rel=\"alternate\" type=\"application/json\" href=\"")
          .append(escape(b.get("instance").asText())).append("\">\n");
    }
    sb.append("<title>").append(status.code()).append(' ').append(escape(title)).append("</title>\n</head>\n<body>\n");
    sb.append("<h1>").append(escape(title)).append("</h1>\n");
    sb.append("<p>").append(escape(b.path("detail").asText())).append("</p>\n");
    sb.append("<p>Why: ").append(escape(b.path("why").asText())).append("</p>\n");
    for (String g : ConfigReader.GUIDANCE) {
      if (b.hasNonNull(g)) {
        String url = escape(b.get(g).asText());
        sb.append("<p><a href=\"").append(url).append("\">").append(g).append("</a></p>\n");
      }
    }
    sb.append("</body>\n</html>\n");
    return new LocalResponse(status, "text/html; charset=utf-8", sb.toString().getBytes(StandardCharsets.UTF_8));
  }

  private static String escape(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
  }

  private static byte[] bytes(ObjectNode n) {
    try {
      return JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(n);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String etag(byte[] json) {
    try {
      byte[] d = MessageDigest.getInstance("SHA-256").digest(json);
      return "\"" + HexFormat.of().formatHex(d, 0, 16) + "\"";
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
