package dev.headroom.gateway.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.headroom.gateway.ConfigException;
import dev.headroom.gateway.GatewayConfig.Policy;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
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
import java.util.List;

/**
 * The admin listener (loopback by default):
 * <ul>
 *   <li>{@code GET /health}: {@code {"status":"up"}}</li>
 *   <li>{@code GET /metrics}: Prometheus text (decisions by policy and outcome, store latency,
 *       upstream latency, JVM)</li>
 *   <li>{@code GET /config}: the configuration in force, as its YAML text</li>
 *   <li>{@code GET /capacity}; {@code POST /capacity?policy=NAME&factor=F}: run-time capacity, F in
 *       (0, 1]; refusals under a reduced policy are 503 {@code temporary-reduced-capacity}</li>
 *   <li>{@code POST /reload}: reads the configuration file again (as SIGHUP does)</li>
 * </ul>
 * Thread-safe: stateless apart from the shared gateway state.
 */
@ChannelHandler.Sharable
final class AdminHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
  /** What the admin port can ask the gateway to do. */
  interface Actions {
    /** Reloads the configuration file; returns its source. */
    String reload() throws ConfigException;
  }

  private static final ObjectMapper JSON = new ObjectMapper();
  private final GatewayState state;
  private final PrometheusMeterRegistry registry;
  private final Actions actions;

  AdminHandler(GatewayState state, PrometheusMeterRegistry registry, Actions actions) {
    this.state = state;
    this.registry = registry;
    this.actions = actions;
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) throws Exception {
    if (req.decoderResult().isFailure()) {
      // a head or body the decoder could not read (a broken chunk-size line, say): the request is
      // not acted on, since it is not the request the client sent, and the decoder reads nothing
      // more of this connection (RFC 9112 section 7.1)
      FullHttpResponse bad = json(HttpResponseStatus.BAD_REQUEST, JSON.createObjectNode().put("error", "malformed_request")
          .put("detail", "The request could not be read as HTTP/1.1: " + req.decoderResult().cause().getClass().getSimpleName()
              + "; expected a well-formed request (RFC 9112)."));
      HttpUtil.setKeepAlive(bad, false);
      ctx.writeAndFlush(bad).addListener(ChannelFutureListener.CLOSE);
      return;
    }
    QueryStringDecoder q = new QueryStringDecoder(req.uri());
    String path = q.path();
    HttpMethod m = req.method();
    FullHttpResponse resp;
    if (path.equals("/health") && m.equals(HttpMethod.GET)) {
      resp = json(HttpResponseStatus.OK, JSON.createObjectNode().put("status", "up"));
    } else if (path.equals("/metrics") && m.equals(HttpMethod.GET)) {
      resp = text(HttpResponseStatus.OK, "text/plain; version=0.0.4; charset=utf-8", registry.scrape());
    } else if (path.equals("/config") && m.equals(HttpMethod.GET)) {
      resp = text(HttpResponseStatus.OK, "application/yaml; charset=utf-8", state.snapshot().config().text());
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
          .put("detail", "Admin endpoints: GET /health, GET /metrics, GET /config, GET|POST /capacity, POST /reload"));
    }
    boolean keepAlive = HttpUtil.isKeepAlive(req);
    HttpUtil.setKeepAlive(resp, keepAlive);
    var f = ctx.writeAndFlush(resp);
    if (!keepAlive) {
      f.addListener(ChannelFutureListener.CLOSE);
    }
  }

  private ObjectNode capacity() {
    ObjectNode n = JSON.createObjectNode();
    ObjectNode policies = n.putObject("policies");
    for (Policy p : state.snapshot().config().policies().values()) {
      ObjectNode e = policies.putObject(p.name());
      e.put("configuredQuota", p.quota().quota());
      e.put("effectiveQuota", state.capacity.effective(p.quota()).quota());
      e.put("factor", state.capacity.factor(p.name()).orElse(1.0));
    }
    return n;
  }

  private FullHttpResponse setCapacity(QueryStringDecoder q) {
    List<String> policy = q.parameters().get("policy");
    List<String> factor = q.parameters().get("factor");
    Policy p = policy == null ? null : state.snapshot().config().policies().get(policy.get(0));
    if (p == null) {
      return json(HttpResponseStatus.BAD_REQUEST, JSON.createObjectNode().put("error", "invalid_input")
          .put("detail", "policy: " + (policy == null ? "missing" : "\"" + policy.get(0) + "\"")
              + " is not a policy; expected one of " + state.snapshot().config().policies().keySet()));
    }
    double f;
    try {
      f = Double.parseDouble(factor == null ? "" : factor.get(0));
      state.capacity.set(p.quota(), f);
    } catch (IllegalArgumentException e) {
      return json(HttpResponseStatus.BAD_REQUEST, JSON.createObjectNode().put("error", "invalid_input")
          .put("detail", "factor: " + (factor == null ? "missing" : "\"" + factor.get(0) + "\"")
              + " is not valid; expected a number in (0, 1]"));
    }
    return json(HttpResponseStatus.OK, capacity());
  }

  private static FullHttpResponse json(HttpResponseStatus status, ObjectNode body) {
    try {
      return text(status, "application/json", JSON.writerWithDefaultPrettyPrinter().writeValueAsString(body) + "\n");
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  private static FullHttpResponse text(HttpResponseStatus status, String type, String body) {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.wrappedBuffer(bytes));
    r.headers().set(HttpHeaderNames.CONTENT_TYPE, type);
    r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, bytes.length);
    return r;
  }
}
