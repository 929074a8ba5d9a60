package dev.headroom.examples.scg;

import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * The service the demo gateway stands in front of, so that the demo runs on its own: a Reactor
 * Netty server on a free loopback port answering {@code GET /quotes/{id}} and
 * {@code GET /items/{id}} with a small JSON document. In a real deployment the routes' {@code uri}
 * is the application's own service.
 */
final class DemoUpstream {

  private DemoUpstream() {}

  static DisposableServer start() {
    return HttpServer.create().host("127.0.0.1").port(0)
        .route(routes -> routes
            .get("/quotes/{id}", (req, res) -> res.header("Content-Type", "application/json")
                .sendString(Mono.just("{\"quote\":\"" + req.param("id") + "\",\"text\":\"Headroom tells you where you stand.\"}")))
            .get("/items/{id}", (req, res) -> res.header("Content-Type", "application/json")
                .sendString(Mono.just("{\"item\":\"" + req.param("id") + "\"}"))))
        .bindNow();
  }
}
