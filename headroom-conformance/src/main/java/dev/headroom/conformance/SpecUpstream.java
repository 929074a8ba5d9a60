package dev.headroom.conformance;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The {@link SpecEndpoint}s served as an upstream, for the front ends that run in front of an
 * application rather than inside it (the gateway, Spring Cloud Gateway): a JDK HTTP server on a
 * loopback port that answers each fixture route's endpoint, {@link SpecFixture#VEND_PATH} as a vend
 * service whose every call succeeds, and 404 elsewhere.
 *
 * <ul>
 *   <li><b>Discarded bytes.</b> {@code resetBuffer()} / {@code reset()} are servlet calls; the
 *   upstream buffers and discards the {@code discard} bytes itself, so, as with a filter, only the
 *   bytes that leave the application reach (and are charged by) the front end.</li>
 *   <li><b>Asynchronous endpoints.</b> An upstream has no servlet async cycle: {@code BLOCKING_ASYNC}
 *   is served as {@code BLOCKING} (as {@code SpecEndpoint} allows).</li>
 * </ul>
 *
 * <p>Thread-safe; one thread per request, so held {@link SpecEndpoint#BLOCKING} requests never
 * hold up others.
 */
public final class SpecUpstream implements AutoCloseable {

  private final HttpServer server;
  private final ExecutorService pool;

  private SpecUpstream(HttpServer server, ExecutorService pool) {
    this.server = server;
    this.pool = pool;
  }

  /** Serves the fixture's endpoints on a free loopback port. */
  public static SpecUpstream start(SpecFixture fixture) throws IOException {
    ExecutorService pool = Executors.newCachedThreadPool();
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
    server.createContext("/", ex -> serve(fixture, ex));
    server.setExecutor(pool);
    server.start();
    return new SpecUpstream(server, pool);
  }

  /** The loopback port it listens on. */
  public int port() {
    return server.getAddress().getPort();
  }

  @Override
  public void close() {
    server.stop(0);
    pool.shutdownNow();
  }

  /** The SpecEndpoints, by the fixture route whose template matches the path. */
  private static void serve(SpecFixture fixture, HttpExchange ex) throws IOException {
    try (ex) {
      drain(ex.getRequestBody());
      String path = ex.getRequestURI().getPath();
      Map<String, String> query = query(ex.getRequestURI().getRawQuery());
      SpecRoute route = fixture.routes().stream().filter(r -> matches(r.template(), path)).findFirst().orElse(null);
      boolean head = ex.getRequestMethod().equals("HEAD");
      if (path.equals(SpecFixture.VEND_PATH)) {
        // a vend service: every call succeeds (seed 003 response envelope)
        text(ex, 200, "application/json", "{\"protocol\":{\"name\":\"vend\",\"version\":\"0.1.0\"},\"id\":\"spec\","
            + "\"result\":{\"ok\":true}}", head);
        return;
      }
      if (route == null) {
        text(ex, 404, "text/plain", "no such endpoint", head);
        return;
      }
      switch (route.endpoint()) {
        case OK -> text(ex, 200, "text/plain", "ok", head);
        case BLOCKING, BLOCKING_ASYNC -> {
          fixture.hold().enter();
          text(ex, 200, "text/plain", "done", head);
        }
        case REDIRECT -> {
          String to = query.get("to");
          if (to == null) {
            text(ex, 200, "text/plain", "ok", head);
          } else {
            ex.getResponseHeaders().set("Location", "/spec/free");
            ex.sendResponseHeaders(to.equals("send") ? 302 : 303, -1);
          }
        }
        case BYTES -> {
          // Bytes an application throws away before committing (resetBuffer, reset) never leave it.
          ByteArrayOutputStream body = new ByteArrayOutputStream();
          int discard = Integer.parseInt(query.getOrDefault("discard", "0"));
          body.write("d".repeat(discard).getBytes(StandardCharsets.US_ASCII));
          if (query.containsKey("reset")) {
            body.reset();
          }
          body.write("x".repeat(Integer.parseInt(query.getOrDefault("n", "0"))).getBytes(StandardCharsets.US_ASCII));
          ex.getResponseHeaders().set("Content-Type", "application/octet-stream");
          if (head) {
            ex.sendResponseHeaders(200, -1);
          } else {
            ex.sendResponseHeaders(200, 0); // chunked: no Content-Length in advance
            try (OutputStream out = ex.getResponseBody()) {
              body.writeTo(out);
            }
          }
        }
        case STATUS -> {
          if (query.containsKey("charge")) {
            ex.getResponseHeaders().set(SpecFixture.CHARGE_HEADER, query.get("charge"));
          }
          text(ex, Integer.parseInt(query.getOrDefault("status", "200")), "text/plain", "ok", head);
        }
        default -> throw new IllegalStateException(route.endpoint().toString());
      }
    }
  }

  private static void text(HttpExchange ex, int status, String type, String body, boolean head) throws IOException {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", type);
    if (head) {
      ex.getResponseHeaders().set("Content-Length", Integer.toString(b.length));
      ex.sendResponseHeaders(status, -1);
    } else {
      ex.sendResponseHeaders(status, b.length);
      ex.getResponseBody().write(b);
    }
  }

  private static boolean matches(String template, String path) {
    String[] t = template.split("/", -1);
    String[] p = path.split("/", -1);
    if (t.length != p.length) {
      return false;
    }
    for (int i = 0; i < t.length; i++) {
      if (!(t[i].startsWith("{") && !p[i].isEmpty()) && !t[i].equals(p[i])) {
        return false;
      }
    }
    return true;
  }

  private static Map<String, String> query(String raw) {
    Map<String, String> q = new HashMap<>();
    if (raw != null) {
      for (String pair : raw.split("&")) {
        int eq = pair.indexOf('=');
        q.put(eq < 0 ? pair : pair.substring(0, eq), eq < 0 ? "" : pair.substring(eq + 1));
      }
    }
    return q;
  }

  private static void drain(InputStream in) throws IOException {
    in.transferTo(OutputStream.nullOutputStream());
  }
}
