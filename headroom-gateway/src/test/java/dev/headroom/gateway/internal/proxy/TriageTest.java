package dev.headroom.gateway.internal.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.InMemoryStore;
import dev.headroom.ManualTicker;
import dev.headroom.QuotaLimiter;
import dev.headroom.enforcement.Gate;
import dev.headroom.enforcement.RouteRules;
import dev.headroom.gateway.GatewayConfig;
import dev.headroom.gateway.config.Route;
import dev.headroom.gateway.internal.GatewayServer;
import dev.headroom.http.body.RefusalFormat;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * {@link Triage} as the pure function it is: a snapshot, a request head and the discovery
 * document in, {@code Local | Forward | Vend} out, with no channel, store or clock. The answers'
 * bytes are checked where the texts matter (Graceful Boundaries section 6: error, detail, why, and
 * for input the field and what was expected).
 */
class TriageTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String YAML = """
      service: {name: Triage}
      admin: {enabled: false}
      limits: {maxBodyBytes: 1000, maxHeaderBytes: 4096, maxRequestLineBytes: 2048}
      upstreams:
        up: {url: "http://127.0.0.1:9"}
      policies:
        svc: {quota: 10, window: 1m, why: Limits keep the service available for everyone.}
      routes:
        - {method: GET, path: /items, upstream: up, policies: [svc]}
        - {method: POST, path: /items, upstream: up}
        - {method: GET, path: /live, upstream: up, upgrade: [websocket, irc]}
        - {name: calls, type: vend, path: /vend, upstream: up, vend: {limits: {service: svc}, maxRequestBytes: 256}}
      """;

  private final Snapshot snap;
  private final Gate<Object> gate;

  TriageTest() throws Exception {
    GatewayConfig config = GatewayConfig.parse(YAML, "admission.yaml");
    GatewayMessages vocabulary = GatewayMessages.of(GatewayServer.sections(config), ManualTicker.atFixedInstant());
    QuotaLimiter limiter = QuotaLimiter.of(InMemoryStore.builder().ticker(ManualTicker.atFixedInstant()).build());
    Map<Route, VendRoutes> vend = new IdentityHashMap<>();
    for (Route r : config.routes()) {
      r.vend().ifPresent(v -> vend.put(r, VendRoutes.of(v, config.policies(), limiter)));
    }
    gate = Gate.builder().limiter(limiter).refusals(vocabulary.refusals()).discovery("Items", "Items for tests.")
        .route(RouteRules.builder("/items").methods("GET").policy(config.policies().get("svc").quota()).build())
        .build();
    snap = new Snapshot(config, new RouteTable(config, vocabulary), Map.of(), vocabulary, vend, Optional.empty(), gate);
  }

  private Triage admit(HttpRequest r) {
    return Triage.of(snap, r, RefusalFormat.JSON);
  }

  private static HttpRequest get(String uri) {
    return new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, uri, Unpooled.EMPTY_BUFFER);
  }

  private static HttpRequest failed(Throwable cause) {
    HttpRequest r = get("/items");
    r.setDecoderResult(DecoderResult.failure(cause));
    return r;
  }

  private static Triage.Local local(Triage a, int status, Triage.Body body) {
    assertThat(a).isInstanceOf(Triage.Local.class);
    Triage.Local l = (Triage.Local) a;
    assertThat(l.response().status().code()).isEqualTo(status);
    assertThat(l.body()).isEqualTo(body);
    return l;
  }

  private static JsonNode json(Triage.Local l) throws Exception {
    return JSON.readTree(l.response().body());
  }

  @Test
  void aRoutedRequestIsForwardedOnItsRoute() {
    Triage a = admit(get("/items?page=2"));
    assertThat(a).isInstanceOf(Triage.Forward.class);
    assertThat(((Triage.Forward) a).route().route().path()).isEqualTo("/items");
  }

  @Test
  void aVendRouteIsReadWholeFirst_seed003() {
    HttpRequest r = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/vend");
    r.headers().set("content-length", "100");
    Triage a = admit(r);
    assertThat(a).isInstanceOf(Triage.Vend.class);
    assertThat(((Triage.Vend) a).vend()).isNotNull();
  }

  @Test
  void aVendCallDeclaredOverItsBoundIsTheVendReadersRefusalAndTheBodyIsNotRead_seed003() throws Exception {
    HttpRequest r = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/vend");
    r.headers().set("content-length", "257");
    Triage.Local l = local(admit(r), 400, Triage.Body.UNREAD);
    assertThat(l.response().contentType()).isEqualTo("application/json");
  }

  @Test
  void noRouteIs404WithTheDiscoveryUrlAndTheBodyIsDropped() throws Exception {
    Triage.Local l = local(admit(get("/nothing")), 404, Triage.Body.DROP);
    JsonNode b = json(l);
    assertThat(b.get("error").asText()).isEqualTo("not_found");
    assertThat(b.get("detail").asText()).isEqualTo("No route of this service matches GET /nothing.");
    assertThat(b.get("discoveryUrl").asText()).isEqualTo("/.well-known/limits");
  }

  @Test
  void anotherMethodIs405WithAllow_rfc9110_15_5_6() throws Exception {
    HttpRequest r = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.DELETE, "/items",
        Unpooled.EMPTY_BUFFER);
    Triage.Local l = local(admit(r), 405, Triage.Body.DROP);
    assertThat(l.response().headers().get("allow")).contains("GET").contains("POST");
    assertThat(json(l).get("allowedMethods").size())
        .isEqualTo(l.response().headers().get("allow").split(", ").length);
  }

  @Test
  void aDeclaredBodyOverTheBoundIs413AndIsNotRead_rfc9110_15_5_14() throws Exception {
    HttpRequest r = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/items");
    r.headers().set("content-length", "1001");
    JsonNode b = json(local(admit(r), 413, Triage.Body.UNREAD));
    assertThat(b.get("field").asText()).isEqualTo("body");
    assertThat(b.get("expected").asText()).isEqualTo("A request body of at most 1000 bytes.");
    assertThat(b.get("maxBodyBytes").asLong()).isEqualTo(1000);
  }

  @Test
  void decodingFailuresAreAnsweredAndEndTheConnection() throws Exception {
    JsonNode h = json(local(admit(failed(new TooLongHttpHeaderException("big"))), 431, Triage.Body.UNREAD));
    assertThat(h.get("detail").asText()).isEqualTo("The request's header fields are larger than 4096 bytes in total.");
    JsonNode l = json(local(admit(failed(new TooLongHttpLineException("long"))), 414, Triage.Body.UNREAD));
    assertThat(l.get("expected").asText()).isEqualTo("A request line of at most 2048 bytes.");
    JsonNode m = json(local(admit(failed(new IllegalArgumentException("bad version"))), 400, Triage.Body.UNREAD));
    assertThat(m.get("detail").asText()).isEqualTo("The request could not be parsed as HTTP/1.1: bad version");
    JsonNode t = json(local(admit(failed(new RequestDecoder.Refusal(GatewayMessages.requestHeadTimedOut(
        Duration.ofMillis(1500))))), 408, Triage.Body.UNREAD));
    assertThat(t.get("detail").asText()).contains("1500 milliseconds");
    assertThat(t.get("timeoutSeconds").asDouble()).isEqualTo(1.5);
  }

  @Test
  void theDiscoveryDocumentIsTheGatesAnd304WhenItsEtagMatches_rfc9110_13_1_2() {
    Triage.Local ok = local(admit(get("/.well-known/limits")), 200, Triage.Body.DROP);
    byte[] doc = gate.discovery().orElseThrow().toJsonBytes();
    String etag = gate.discovery().orElseThrow().etag();
    assertThat(ok.response().body()).isEqualTo(doc);
    assertThat(ok.response().headers().get("etag")).isEqualTo(etag);
    assertThat(ok.response().headers().get("cache-control")).isNotBlank();
    HttpRequest again = get("/api/limits");
    again.headers().set("if-none-match", etag);
    local(admit(again), 304, Triage.Body.DROP);
    HttpRequest post = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/.well-known/limits",
        Unpooled.EMPTY_BUFFER);
    local(admit(post), 404, Triage.Body.DROP); // only GET and HEAD read the document
  }

  private static HttpRequest upgrade(String uri, String protocols) {
    HttpRequest r = get(uri);
    r.headers().set("connection", "Upgrade").set("upgrade", protocols);
    return r;
  }

  @Test
  void anUpgradeTheRouteAllowsIsForwardedAskingForTheAllowedProtocolsOnly_rfc9110_7_8() {
    Triage a = admit(upgrade("/live", "foo, WebSocket, IRC/6.9, h2c"));
    assertThat(a).isInstanceOf(Triage.Forward.class);
    assertThat(((Triage.Forward) a).upgrade()).isEqualTo("WebSocket, IRC/6.9");
    assertThat(((Triage.Forward) admit(get("/live"))).upgrade()).isNull();
  }

  @Test
  void anUpgradeTheRouteDoesNotAllowIs400NamingWhatItAllows() throws Exception {
    JsonNode b = json(local(admit(upgrade("/live", "spdy/3")), 400, Triage.Body.DROP));
    assertThat(b.get("error").asText()).isEqualTo("upgrade_not_allowed");
    assertThat(b.get("detail").asText()).isEqualTo("The route /live accepts Upgrade: irc, websocket only, not Upgrade: spdy/3.");
    assertThat(b.get("allowedUpgrades").toString()).isEqualTo("[\"irc\",\"websocket\"]");
    assertThat(b.get("field").asText()).isEqualTo("Upgrade");
    JsonNode none = json(local(admit(upgrade("/items", "websocket")), 400, Triage.Body.DROP));
    assertThat(none.get("detail").asText()).isEqualTo(
        "The route /items does not accept connection upgrades, not Upgrade: websocket.");
    assertThat(none.get("expected").asText()).isEqualTo("A request without Upgrade.");
  }

  @Test
  void h2cAndAnHttp10UpgradeAreIgnored_rfc9113_3_1_rfc9110_7_8() {
    assertThat(((Triage.Forward) admit(upgrade("/items", "h2c"))).upgrade()).isNull();
    // without the upgrade connection option, Upgrade is a stray hop-by-hop field: dropped, not an offer
    HttpRequest stray = get("/items");
    stray.headers().set("connection", "keep-alive").set("upgrade", "websocket");
    assertThat(((Triage.Forward) admit(stray)).upgrade()).isNull();
    HttpRequest old = new DefaultFullHttpRequest(HttpVersion.HTTP_1_0, HttpMethod.GET, "/items", Unpooled.EMPTY_BUFFER);
    old.headers().set("upgrade", "websocket");
    assertThat(((Triage.Forward) admit(old)).upgrade()).isNull();
  }

  @Test
  void anUpgradeRequestWithABodyIs400AndTheBodyIsNotRead() throws Exception {
    HttpRequest r = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "/live");
    r.headers().set("connection", "upgrade").set("upgrade", "websocket").set("content-length", "5");
    JsonNode b = json(local(admit(r), 400, Triage.Body.UNREAD));
    assertThat(b.get("detail").asText()).isEqualTo("The request asks to upgrade its connection and carries a body.");
  }
}
