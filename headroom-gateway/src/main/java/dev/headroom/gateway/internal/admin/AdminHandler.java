package dev.headroom.gateway.internal.admin;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.headroom.gateway.ConfigException;
import dev.headroom.gateway.config.AdminToken;
import dev.headroom.gateway.config.Policy;
import dev.headroom.gateway.internal.LingeringClose;
import dev.headroom.gateway.internal.Timers;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The admin listener (loopback by default):
 * <ul>
 *   <li>{@code GET /health}: {@code {"status":"up"}}, the liveness check: 200 whatever the store does</li>
 *   <li>{@code GET /ready}: the readiness check: 200 {@code {"status":"ready"}} while the gateway
 *       takes traffic; 503 with a Graceful Boundaries body ({@code error}, {@code detail},
 *       {@code why}) while it drains, and with {@code Retry-After} while a Redis store that fails
 *       closed has no connection ({@link Readiness}; RFC 9110 section 15.6.4)</li>
 *   <li>{@code POST /drain}: begins the graceful stop (as SIGTERM does for {@code headroom serve}):
 *       202 with the {@code shutdown.drainTimeout} in force (RFC 9110 section 15.3.3)</li>
 *   <li>{@code GET /metrics}: Prometheus text (decisions by policy and outcome, store latency,
 *       upstream latency, JVM)</li>
 *   <li>{@code GET /config}: the configuration in force, as its YAML text</li>
 *   <li>{@code GET /capacity}; {@code POST /capacity?policy=NAME&factor=F}: run-time capacity, F in
 *       (0, 1]; refusals under a reduced policy are 503 {@code temporary-reduced-capacity}</li>
 *   <li>{@code POST /reload}: reads the configuration file again (as SIGHUP does)</li>
 *   <li>{@code GET /dashboard}: the live usage dashboard; {@code GET /usage} its data as JSON,
 *       {@code GET /usage/stream} the same as server-sent events ({@link Dashboard})</li>
 * </ul>
 * When the configuration names an admin token ({@code admin.tokenEnv} / {@code tokenFile}, required
 * when the listener is bound beyond loopback), every request but the probes {@code /health} and
 * {@code /ready} must carry it, as
 * {@code Authorization: Bearer TOKEN} or as the password of {@code Basic} credentials (which a
 * browser asks for and then sends with the page's own requests, the event stream included);
 * without it the answer is 401. The configuration served at {@code /config} has the password of
 * any URI in it (a Redis URI's, say) replaced by {@code ***}.
 * Thread-safe: stateless apart from the running gateway it reads ({@link LiveGateway}).
 */
@ChannelHandler.Sharable
public final class AdminHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
  /** What the admin port can ask the gateway to do. */
  public interface Actions {
    /** Reloads the configuration file; returns its source. */
    String reload() throws ConfigException;

    /** Begins the graceful stop (or finds it under way) without waiting for it; returns its timeout. */
    Duration drain();

    /** Whether the gateway should be sent traffic now. */
    Readiness readiness();
  }

  private static final ObjectMapper JSON = new ObjectMapper();
  private final LiveGateway gateway;
  /** The timers that bound a closing connection's lingering (RFC 9112 section 9.6). */
  private final Timers timers;
  private final PrometheusMeterRegistry registry;
  private final Actions actions;
  private final Dashboard dashboard;
  private final Optional<AdminToken> token;

  /**
   * The handler of the admin listener's requests.
   *
   * @param gateway what {@code /config} and {@code /capacity} read and set
   * @param timers the client connections' timers, which bound how long a closing connection lingers
   * @param registry what {@code /metrics} renders
   * @param actions what {@code /reload} and {@code /drain} run, and what {@code /ready} reads
   * @param dashboard what serves {@code /dashboard}, {@code /usage} and {@code /usage/stream}
   * @param token the token every request but {@code /health} must carry, when configured
   */
  public AdminHandler(LiveGateway gateway, Timers timers, PrometheusMeterRegistry registry, Actions actions,
      Dashboard dashboard, Optional<AdminToken> token) {
    this.gateway = gateway;
    this.timers = timers;
    this.registry = registry;
    this.actions = actions;
    this.dashboard = dashboard;
    this.token = token;
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) throws Exception {
    if (req.decoderResult().isFailure()) {
      // a head or body the decoder could not read (a broken chunk-size line, say): the request is
      // not acted on, since it is not the request the client sent, and the decoder reads nothing
      // more of this connection (RFC 9112 section 7.1)
      FullHttpResponse bad = json(HttpResponseStatus.BAD_REQUEST, JSON.createObjectNode().put("error", "malformed_request")
          .put("detail", "The request could not be read as HTTP/1.1; expected a well-formed request (RFC 9112)."));
      HttpUtil.setKeepAlive(bad, false);
      ctx.writeAndFlush(bad).addListener(x -> LingeringClose.close(ctx.channel(), timers));
      return;
    }
    QueryStringDecoder q = new QueryStringDecoder(req.uri());
    String path = q.path();
    HttpMethod m = req.method();
    FullHttpResponse resp;
    if (!path.equals("/health") && !path.equals("/ready") && token.isPresent() && !token.get().matches(presented(req))) {
      resp = problem(HttpResponseStatus.UNAUTHORIZED, "unauthorized", "This admin request carries no valid token.",
          "The admin listener is reachable from other machines, so it answers only requests that carry the "
              + "token named by admin.tokenEnv or admin.tokenFile.",
          "Send Authorization: Bearer TOKEN, or Basic credentials with the token as the password.");
      resp.headers().add(HttpHeaderNames.WWW_AUTHENTICATE, "Basic realm=\"headroom admin\", charset=\"UTF-8\"");
      resp.headers().add(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer realm=\"headroom admin\"");
    } else if (path.equals("/usage/stream") && m.equals(HttpMethod.GET)) {
      dashboard.stream(ctx);
      return;
    } else if (path.equals("/usage") && m.equals(HttpMethod.GET)) {
      resp = json(HttpResponseStatus.OK, dashboard.usage());
      resp.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-store");
    } else if ((path.equals("/dashboard") || path.startsWith("/dashboard/")) && m.equals(HttpMethod.GET)) {
      resp = DashboardAssets.get(path).map(a -> {
        FullHttpResponse r = bytes(HttpResponseStatus.OK, a.contentType(), a.bytes());
        r.headers().set("content-security-policy", "default-src 'self'; style-src 'self'; script-src 'self'; "
            + "connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'");
        r.headers().set("x-content-type-options", "nosniff");
        return r;
      }).orElseGet(() -> problem(HttpResponseStatus.NOT_FOUND, "not_found", "No dashboard file " + path + ".",
          "The dashboard serves its page and the files the page loads, nothing else.", "Open /dashboard."));
    } else if (path.equals("/health") && m.equals(HttpMethod.GET)) {
      resp = json(HttpResponseStatus.OK, JSON.createObjectNode().put("status", "up"));
    } else if (path.equals("/ready") && m.equals(HttpMethod.GET)) {
      resp = ready(actions.readiness());
    } else if (path.equals("/drain") && m.equals(HttpMethod.POST)) {
      Duration timeout = actions.drain();
      resp = json(HttpResponseStatus.ACCEPTED, JSON.createObjectNode().put("status", "draining")
          .put("drainTimeoutSeconds", timeout.toMillis() / 1000.0));
    } else if (path.equals("/metrics") && m.equals(HttpMethod.GET)) {
      resp = text(HttpResponseStatus.OK, "text/plain; version=0.0.4; charset=utf-8", registry.scrape());
    } else if (path.equals("/config") && m.equals(HttpMethod.GET)) {
      resp = text(HttpResponseStatus.OK, "application/yaml; charset=utf-8",
          redactPasswords(gateway.config().text()));
    } else if (path.equals("/capacity") && m.equals(HttpMethod.GET)) {
      resp = json(HttpResponseStatus.OK, capacity());
    } else if (path.equals("/capacity") && m.equals(HttpMethod.POST)) {
      resp = setCapacity(q);
    } else if (path.equals("/reload") && m.equals(HttpMethod.POST)) {
      try {
        String source = actions.reload();
        resp = json(HttpResponseStatus.OK, JSON.createObjectNode().put("reloaded", source));
      } catch (ConfigException e) {
        ObjectNode n = JSON.createObjectNode().put("error", "invalid_configuration");
        e.problems().forEach(n.putArray("problems")::add);
        resp = json(HttpResponseStatus.UNPROCESSABLE_ENTITY, n);
      }
    } else {
      resp = json(HttpResponseStatus.NOT_FOUND, JSON.createObjectNode().put("error", "not_found")
          .put("detail", "Admin endpoints: GET /health, GET /ready, GET /metrics, GET /config, GET|POST /capacity, POST /reload, POST /drain, "
              + "GET /dashboard, GET /usage, GET /usage/stream"));
    }
    boolean keepAlive = HttpUtil.isKeepAlive(req);
    HttpUtil.setKeepAlive(resp, keepAlive);
    var f = ctx.writeAndFlush(resp);
    if (!keepAlive) {
      f.addListener(x -> LingeringClose.close(ctx.channel(), timers)); // RFC 9112 section 9.6
    }
  }

  /** {@code GET /ready}: 200 while the gateway takes traffic, else 503 saying why and when to look again. */
  private static FullHttpResponse ready(Readiness r) {
    FullHttpResponse resp = switch (r) {
      case READY -> json(HttpResponseStatus.OK, JSON.createObjectNode().put("status", "ready"));
      case DRAINING -> problem(HttpResponseStatus.SERVICE_UNAVAILABLE, "draining",
          "The gateway is draining: it accepts no new connections and stops once the exchanges in flight finish.",
          "It was told to stop (SIGTERM, SIGINT or POST /drain); a load balancer should send new traffic elsewhere.",
          "Send requests to another instance.");
      case STORE_UNAVAILABLE -> problem(HttpResponseStatus.SERVICE_UNAVAILABLE, "store_unavailable",
          "The gateway has no connection to its Redis store, which fails closed: limited requests are refused 503.",
          "store.failurePolicy is fail-closed, so no request is admitted on a route with policies until Redis answers.",
          "Send requests to another instance, or ask again once Redis is reachable.");
    };
    if (r == Readiness.STORE_UNAVAILABLE) {
      resp.headers().set(HttpHeaderNames.RETRY_AFTER, "1"); // a drain does not end for this instance: no Retry-After
    }
    resp.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-store");
    return resp;
  }

  private ObjectNode capacity() {
    ObjectNode n = JSON.createObjectNode();
    ObjectNode policies = n.putObject("policies");
    for (Policy p : gateway.config().policies().values()) {
      ObjectNode e = policies.putObject(p.name());
      e.put("configuredQuota", p.quota().quota());
      e.put("effectiveQuota", gateway.capacity().effective(p.quota()).quota());
      e.put("factor", gateway.capacity().factor(p.name()).orElse(1.0));
    }
    return n;
  }

  private FullHttpResponse setCapacity(QueryStringDecoder q) {
    List<String> policy = q.parameters().get("policy");
    List<String> factor = q.parameters().get("factor");
    Policy p = policy == null ? null : gateway.config().policies().get(policy.get(0));
    if (p == null) {
      return json(HttpResponseStatus.BAD_REQUEST, JSON.createObjectNode().put("error", "invalid_input")
          .put("detail", "policy: " + (policy == null ? "missing" : "\"" + policy.get(0) + "\"")
              + " is not a policy; expected one of " + gateway.config().policies().keySet()));
    }
    double f;
    try {
      f = Double.parseDouble(factor == null ? "" : factor.get(0));
      gateway.capacity().set(p.quota(), f);
    } catch (IllegalArgumentException e) {
      return json(HttpResponseStatus.BAD_REQUEST, JSON.createObjectNode().put("error", "invalid_input")
          .put("detail", "factor: " + (factor == null ? "missing" : "\"" + factor.get(0) + "\"")
              + " is not valid; expected a number in (0, 1]"));
    }
    return json(HttpResponseStatus.OK, capacity());
  }

  /** The token a request presents: a Bearer token, or the password of Basic credentials. */
  private static String presented(FullHttpRequest req) {
    String auth = req.headers().get(HttpHeaderNames.AUTHORIZATION);
    if (auth == null) {
      return null;
    }
    if (auth.regionMatches(true, 0, "Bearer ", 0, 7)) {
      return auth.substring(7).strip();
    }
    if (auth.regionMatches(true, 0, "Basic ", 0, 6)) {
      try {
        String pair = new String(Base64.getDecoder().decode(auth.substring(6).strip()), StandardCharsets.UTF_8);
        int colon = pair.indexOf(':');
        return colon < 0 ? null : pair.substring(colon + 1);
      } catch (IllegalArgumentException e) {
        return null;
      }
    }
    return null;
  }

  /** {@code scheme://user:secret@host} becomes {@code scheme://user:***@host}, wherever it appears. */
  static String redactPasswords(String text) {
    return USERINFO_PASSWORD.matcher(text).replaceAll("$1***@");
  }

  private static final Pattern USERINFO_PASSWORD =
      Pattern.compile("([A-Za-z][A-Za-z0-9+.-]*://[^:/@\\s\"']*:)[^/\\s\"']*@");

  /**
   * A Graceful Boundaries body (seed 002, "Structured refusal"): what happened and what to do next
   * in {@code detail}, the reason in {@code why}.
   */
  static FullHttpResponse problem(HttpResponseStatus status, String error, String detail, String why, String next) {
    FullHttpResponse r = json(status, JSON.createObjectNode().put("error", error).put("detail", detail + " " + next)
        .put("why", why));
    r.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-store");
    return r;
  }

  private static FullHttpResponse json(HttpResponseStatus status, ObjectNode body) {
    try {
      return text(status, "application/json", JSON.writerWithDefaultPrettyPrinter().writeValueAsString(body) + "\n");
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  private static FullHttpResponse text(HttpResponseStatus status, String type, String body) {
    return bytes(status, type, body.getBytes(StandardCharsets.UTF_8));
  }

  private static FullHttpResponse bytes(HttpResponseStatus status, String type, byte[] bytes) {
    FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.wrappedBuffer(bytes));
    r.headers().set(HttpHeaderNames.CONTENT_TYPE, type);
    r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, bytes.length);
    return r;
  }
}
