package dev.headroom.client;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.headroom.Ticker;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A real HTTP server on loopback, port 0, scripted by a handler; records every request and reply.
 * Shared with the conformance checker's tests through this module's test-jar.
 */
public final class TestServer implements AutoCloseable {

  public interface Handler {
    Reply handle(Request request) throws IOException;
  }

  public record Request(String method, String path, String query, Map<String, List<String>> headers, long atNanos) {}

  public record Logged(Request request, int status) {}

  public static final class Reply {
    public final int status;
    public final Map<String, List<String>> headers = new LinkedHashMap<>();
    public byte[] body = new byte[0];

    public Reply(int status) {
      this.status = status;
    }

    public static Reply of(int status) {
      return new Reply(status);
    }

    public Reply header(String name, String value) {
      headers.computeIfAbsent(name, k -> new ArrayList<>()).add(value);
      return this;
    }

    public Reply body(String contentType, String text) {
      header("Content-Type", contentType);
      body = text.getBytes(StandardCharsets.UTF_8);
      return this;
    }

    public Reply json(String text) {
      return body("application/json", text);
    }
  }

  private final HttpServer server;
  private final ExecutorService executor = Executors.newFixedThreadPool(4);
  private final List<Logged> log = new ArrayList<>();
  private final Ticker ticker;

  public TestServer(Ticker ticker, Handler handler) throws IOException {
    this.ticker = ticker;
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/", ex -> serve(ex, handler));
    server.setExecutor(executor);
    server.start();
  }

  private void serve(HttpExchange ex, Handler handler) throws IOException {
    try (ex) {
      ex.getRequestBody().readAllBytes();
      Request req = new Request(ex.getRequestMethod(), ex.getRequestURI().getPath(), ex.getRequestURI().getRawQuery(),
          Map.copyOf(ex.getRequestHeaders()), ticker.read());
      Reply reply;
      try {
        reply = handler.handle(req);
      } catch (RuntimeException e) {
        reply = Reply.of(500).body("text/plain", e.toString());
      }
      synchronized (log) {
        log.add(new Logged(req, reply.status));
      }
      reply.headers.forEach((k, v) -> v.forEach(x -> ex.getResponseHeaders().add(k, x)));
      boolean noBody = reply.body.length == 0 || ex.getRequestMethod().equals("HEAD");
      ex.sendResponseHeaders(reply.status, noBody ? -1 : reply.body.length);
      if (!noBody) {
        try (OutputStream out = ex.getResponseBody()) {
          out.write(reply.body);
        }
      }
    }
  }

  public URI uri(String path) {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + path);
  }

  public List<Logged> log() {
    synchronized (log) {
      return List.copyOf(log);
    }
  }

  public long count(int status) {
    return log().stream().filter(l -> l.status() == status).count();
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
