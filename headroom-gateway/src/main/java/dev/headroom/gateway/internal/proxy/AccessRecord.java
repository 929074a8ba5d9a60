package dev.headroom.gateway.internal.proxy;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.headroom.Decision;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaPolicy;
import dev.headroom.enforcement.GateResponse;
import dev.headroom.enforcement.Verdict;
import dev.headroom.gateway.config.AccessLogSettings;
import dev.headroom.gateway.config.PartitionKeySettings;
import dev.headroom.gateway.internal.accesslog.AccessLogWriter;
import dev.headroom.http.headers.RateLimitFields;
import dev.headroom.http.headers.ServiceLimitItem;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The facts of one ended exchange, as its access log line says them; rendered on the access log's
 * writer thread, never on an event loop (the verdict's fields are parsed there too).
 *
 * <p>What the line says of the decision ({@link #outcome}):
 * <ul>
 *   <li>{@code local}: answered from the request head alone (404, 405, the discovery document, the
 *     limits page), no route's policies asked;
 *   <li>{@code unlimited}: the route has no policy for the request; {@code vend}: a vend call;
 *   <li>{@code allowed}: the policies admitted it; {@code shadow}: admitted, but a shadow policy
 *     would have refused it (that policy is named);
 *   <li>{@code refused}: refused by the policy named: the RateLimit field item whose remaining
 *     quota is 0 (a route whose dialects name no policy, such as {@code X-RateLimit}, names none);
 *   <li>{@code blocked}: refused by an escalation's block; {@code rejected}: an invalid credential
 *     or cost (401, 400); {@code unavailable}: the store could not decide (503);
 *     {@code undecided}: the store could not decide and the request went through;
 *     {@code answered}: the gate answered itself (a discovery document);
 *   <li>{@code error}: the gate failed, or the client left before it decided.
 * </ul>
 * The partition is the {@code pk} the RateLimit fields carry for it, base64: the route's
 * {@code pk} exposure ({@link RouteExposures}, a hash or HMAC, never the raw key), taken from the
 * most constraining policy of an admission, or from the refusing item of a refusal's fields; none
 * when the route's {@code pk} is {@code off}.
 *
 * <p>Immutable.
 */
record AccessRecord(AccessLogSettings settings, Instant time, ZoneId zone, String client, String method, String uri,
    String protocol, String referer, String userAgent, int status, long bytesIn, long bytesOut, long nanos,
    long upstreamNanos, PartitionKeySettings pk, CompiledRoute route, boolean vend, Verdict verdict, boolean complete)
    implements AccessLogWriter.Entry {

  private static final JsonFactory JSON = new JsonFactory();
  private static final DateTimeFormatter LOCAL = DateTimeFormatter.ofPattern("dd/MMM/yyyy:HH:mm:ss Z", Locale.ROOT);

  /** What the decision came to, the policies it asked, the one it names and the partition's pk. */
  record Outcome(String outcome, List<String> policies, String policy, String pk) {}

  @Override
  public String line() {
    Outcome o = outcome();
    return settings.format() == AccessLogSettings.Format.JSON ? json(o) : combined(o);
  }

  /** The request target as logged: without its query unless {@code accessLog.query}. */
  String target() {
    int q = uri.indexOf('?');
    return settings.query() || q < 0 ? uri : uri.substring(0, q);
  }

  private String json(Outcome o) {
    StringWriter s = new StringWriter(256);
    try (JsonGenerator g = JSON.createGenerator(s)) {
      g.writeStartObject();
      g.writeStringField("time", time.toString());
      g.writeStringField("client", client);
      g.writeStringField("method", method);
      g.writeStringField("path", target());
      g.writeStringField("protocol", protocol);
      g.writeNumberField("status", status);
      g.writeNumberField("bytesIn", bytesIn);
      g.writeNumberField("bytesOut", bytesOut);
      g.writeNumberField("durationMs", millis(nanos));
      if (upstreamNanos >= 0) {
        g.writeNumberField("upstreamMs", millis(upstreamNanos));
      } else {
        g.writeNullField("upstreamMs");
      }
      g.writeStringField("route", route == null ? null : route.route().name());
      g.writeArrayFieldStart("policies");
      for (String p : o.policies()) {
        g.writeString(p);
      }
      g.writeEndArray();
      g.writeStringField("outcome", o.outcome());
      g.writeStringField("policy", o.policy());
      g.writeStringField("pk", o.pk());
      g.writeBooleanField("complete", complete);
      g.writeStringField("referer", referer);
      g.writeStringField("userAgent", userAgent);
      g.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException(e); // a StringWriter does not fail
    }
    return s.toString();
  }

  /**
   * {@code $remote_addr - - [$time_local] "$request" $status $body_bytes_sent "$http_referer"
   * "$http_user_agent"}, then Headroom's fields as {@code key=value} ({@code -} for none).
   */
  private String combined(Outcome o) {
    StringBuilder b = new StringBuilder(256);
    b.append(client.isEmpty() ? "-" : client).append(" - - [").append(LOCAL.format(time.atZone(zone))).append("] \"");
    quoted(b, method + " " + target() + " " + protocol);
    b.append("\" ").append(status).append(' ').append(bytesOut).append(" \"");
    quoted(b, referer == null ? "-" : referer);
    b.append("\" \"");
    quoted(b, userAgent == null ? "-" : userAgent);
    b.append('"');
    b.append(" route=").append(route == null ? "-" : route.route().name());
    b.append(" outcome=").append(o.outcome());
    b.append(" policy=").append(o.policy() == null ? "-" : o.policy());
    b.append(" policies=").append(o.policies().isEmpty() ? "-" : String.join(",", o.policies()));
    b.append(" pk=").append(o.pk() == null ? "-" : o.pk());
    b.append(" bytesIn=").append(bytesIn);
    b.append(" durationMs=").append(millis(nanos));
    b.append(" upstreamMs=").append(upstreamNanos < 0 ? "-" : Double.toString(millis(upstreamNanos)));
    b.append(" complete=").append(complete);
    return b.toString();
  }

  /** Quotes and backslashes escaped, control and non-ASCII bytes as {@code \xHH}, as nginx writes them. */
  private static void quoted(StringBuilder b, String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        b.append('\\').append(c);
      } else if (c < 0x20 || c >= 0x7f) {
        b.append(String.format(Locale.ROOT, "\\x%02X", c & 0xff));
      } else {
        b.append(c);
      }
    }
  }

  private static double millis(long nanos) {
    return Math.max(0, nanos) / 1000 / 1000.0;
  }

  Outcome outcome() {
    return outcome(route, vend, verdict, time, pk);
  }

  /**
   * What an exchange's decision came to, as {@link #outcome()} says it; the partition's pk only
   * when {@code pk} is given (the span of an exchange names none: {@code ExchangeTrace}).
   */
  static Outcome outcome(CompiledRoute route, boolean vend, Verdict verdict, Instant time, PartitionKeySettings pk) {
    if (vend) {
      return new Outcome("vend", List.of(), null, null);
    }
    if (route == null) {
      return new Outcome("local", List.of(), null, null);
    }
    if (route.rules() == null) {
      return new Outcome("unlimited", List.of(), null, null);
    }
    if (verdict == null) {
      return new Outcome("error", List.of(), null, null);
    }
    return switch (verdict.kind()) {
      case PASS -> new Outcome("unlimited", List.of(), null, null);
      case UNDECIDED -> new Outcome("undecided", enforced(route), null, null);
      case ADMIT -> admitted(route, verdict.admission().decision(), pk);
      case ANSWER -> answered(verdict.answer(), time);
    };
  }

  private static List<String> enforced(CompiledRoute route) {
    return route.rules().policies().stream().map(QuotaPolicy::name).toList();
  }

  private static Outcome admitted(CompiledRoute route, Decision d, PartitionKeySettings pk) {
    List<String> names = d.outcomes().stream().map(o -> o.policy().name()).distinct().toList();
    Optional<PolicyOutcome> shadow = d.outcomes().stream().filter(o -> !o.allowed()).findFirst();
    String pkText = null;
    if (pk != null && !d.outcomes().isEmpty()) {
      PolicyOutcome worst = d.mostConstraining();
      pkText = RouteExposures.forRoute(pk, route.route()).pk(worst.policy(), worst.key())
          .map(Base64.getEncoder()::encodeToString).orElse(null);
    }
    return shadow.isPresent() ? new Outcome("shadow", names, shadow.get().policy().name(), pkText)
        : new Outcome("allowed", names, null, pkText);
  }

  private static Outcome answered(GateResponse a, Instant time) {
    Map<String, List<String>> fields = a.fields().stream().collect(Collectors.groupingBy(
        e -> e.getKey().toLowerCase(Locale.ROOT), Collectors.mapping(Map.Entry::getValue, Collectors.toList())));
    RateLimitFields parsed = RateLimitFields.parse(n -> fields.getOrDefault(n.toLowerCase(Locale.ROOT), List.of()),
        time);
    List<String> names = new ArrayList<>();
    ServiceLimitItem refusing = null;
    for (ServiceLimitItem i : parsed.limits()) {
      i.name().filter(n -> !names.contains(n)).ifPresent(names::add);
      if (refusing == null && i.remaining().isPresent() && i.remaining().getAsLong() == 0) {
        refusing = i;
      }
    }
    String pk = refusing == null ? null
        : refusing.partitionKey().map(Base64.getEncoder()::encodeToString).orElse(null);
    String policy = refusing == null ? null : refusing.name().orElse(null);
    String outcome;
    if (!a.refusal()) {
      outcome = "answered";
    } else if (refusing != null) {
      outcome = "refused";
    } else if (a.status() == 503) {
      outcome = "unavailable";
    } else if (a.status() == 401 || a.status() == 400) {
      outcome = "rejected";
    } else if (a.status() == 429 && names.isEmpty()) {
      outcome = "blocked"; // an escalation's block: Retry-After alone, no RateLimit field
    } else {
      outcome = "refused";
    }
    return new Outcome(outcome, names, policy, pk);
  }
}
