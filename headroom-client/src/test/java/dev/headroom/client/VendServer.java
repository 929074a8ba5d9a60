package dev.headroom.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import dev.headroom.Ticker;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/** A vend service on loopback (JDK HttpServer, port 0): every request's envelope goes to a script. */
final class VendServer implements AutoCloseable {

  static final ObjectMapper JSON = new ObjectMapper();

  /** One request as received: method, path, the parsed body (null when not JSON), when (ticker). */
  record Call(String method, String path, JsonNode envelope, long atNanos) {
    String function() {
      return envelope == null ? null : envelope.path("call").path("function").asText(null);
    }

    boolean declaresRateLimit() {
      if (envelope == null) {
        return false;
      }
      for (JsonNode e : envelope.path("extensions")) {
        if ("urn:vnd:ext:rate-limit".equals(e.path("urn").asText())) {
          return true;
        }
      }
      return false;
    }
  }

  record Reply(int status, Map<String, String> headers, String body) {}

  interface Script {
    Reply reply(Call call);
  }

  record Logged(Call call, int status) {}

  private final HttpServer server;
  private final ExecutorService executor = Executors.newFixedThreadPool(2);
  private final List<Logged> log = new ArrayList<>();

  VendServer(Ticker ticker, Script script) throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/", ex -> {
      try (ex) {
        byte[] body = ex.getRequestBody().readAllBytes();
        JsonNode envelope;
        try {
          envelope = body.length == 0 ? null : JSON.readTree(body);
        } catch (IOException notJson) {
          envelope = null;
        }
        Call call = new Call(ex.getRequestMethod(), ex.getRequestURI().getPath(), envelope, ticker.read());
        Reply reply;
        try {
          reply = script.reply(call);
        } catch (RuntimeException e) {
          reply = new Reply(500, Map.of(), e.toString());
        }
        synchronized (log) {
          log.add(new Logged(call, reply.status()));
        }
        reply.headers().forEach((k, v) -> ex.getResponseHeaders().add(k, v));
        ex.getResponseHeaders().add("Content-Type", "application/json");
        byte[] out = reply.body().getBytes(StandardCharsets.UTF_8);
        ex.sendResponseHeaders(reply.status(), out.length == 0 ? -1 : out.length);
        if (out.length > 0) {
          try (OutputStream os = ex.getResponseBody()) {
            os.write(out);
          }
        }
      }
    });
    server.setExecutor(executor);
    server.start();
  }

  URI uri(String path) {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + path);
  }

  List<Logged> log() {
    synchronized (log) {
      return List.copyOf(log);
    }
  }

  long count(int status) {
    return log().stream().filter(l -> l.status() == status).count();
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
