package dev.headroom.gateway;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A real HTTP/1.1 upstream on a loopback port (the JDK's server), scripted by path:
 * <ul>
 *   <li>{@code /echo...}: 200 JSON with the request's headers (as seen upstream) and body length</li>
 *   <li>{@code /status/N}: N with a text/plain body (a bare non-success response)</li>
 *   <li>{@code /hang}: never answers until the test releases it</li>
 *   <li>{@code /slow/N}: 200 {@code slow} after N milliseconds (a slow upstream call)</li>
 *   <li>{@code /bytes/N}: N bytes of body, streamed in 64 KiB chunks</li>
 *   <li>{@code /drip}: chunks of 1 KiB until the client goes away or 10 MiB are sent</li>
 *   <li>{@code /sink}: reads the whole request body, answers its length</li>
 * </ul>
 * Every request's head is recorded in {@link #requests}.
 * Public for headroom-cli's tests (through this module's test jar).
 */
public final class TestUpstream implements AutoCloseable {
  record Seen(String method, String path, Map<String, List<String>> headers) {}

  final BlockingQueue<Seen> requests = new LinkedBlockingQueue<>();
  final CountDownLatch release = new CountDownLatch(1);
  final CountDownLatch dripClosed = new CountDownLatch(1);
  private final HttpServer server;
  private final ExecutorService pool = Executors.newCachedThreadPool();

  public TestUpstream() throws IOException {
    this(HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64));
  }

  /** The same script on {@code server}, bound and not yet started: an {@code HttpsServer} for an https upstream. */
  TestUpstream(HttpServer server) {
    this.server = server;
    server.createContext("/", this::handle);
    server.setExecutor(pool);
    server.start();
  }

  public int port() {
    return server.getAddress().getPort();
  }

  /** Waits until a request for {@code path} has reached this upstream (taking the requests seen before it). */
  public void awaitRequest(String path) throws InterruptedException {
    while (!requests.take().path().equals(path)) {
      // an earlier request: not the one waited for
    }
  }

  private void handle(HttpExchange ex) throws IOException {
    String path = ex.getRequestURI().getPath();
    Map<String, List<String>> headers = new ConcurrentHashMap<>();
    ex.getRequestHeaders().forEach((k, v) -> headers.put(k.toLowerCase(), List.copyOf(v)));
    requests.add(new Seen(ex.getRequestMethod(), ex.getRequestURI().toString(), headers));
    try (ex) {
      if (path.contains("/status/")) {
        int code = Integer.parseInt(path.substring(path.lastIndexOf('/') + 1));
        byte[] b = ("upstream says " + code).getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "text/plain");
        ex.sendResponseHeaders(code, b.length);
        ex.getResponseBody().write(b);
      } else if (path.startsWith("/slow/")) {
        try {
          Thread.sleep(Long.parseLong(path.substring("/slow/".length())));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        byte[] b = "slow".getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "text/plain");
        ex.sendResponseHeaders(200, b.length);
        ex.getResponseBody().write(b);
      } else if (path.equals("/hang")) {
        try {
          release.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        ex.sendResponseHeaders(200, -1);
      } else if (path.startsWith("/bytes/")) {
        long n = Long.parseLong(path.substring("/bytes/".length()));
        ex.getResponseHeaders().set("Content-Type", "application/octet-stream");
        ex.sendResponseHeaders(200, n);
        byte[] chunk = new byte[65536];
        OutputStream out = ex.getResponseBody();
        for (long sent = 0; sent < n; ) {
          int len = (int) Math.min(chunk.length, n - sent);
          out.write(chunk, 0, len);
          sent += len;
        }
      } else if (path.equals("/drip")) {
        ex.getResponseHeaders().set("Content-Type", "application/octet-stream");
        ex.sendResponseHeaders(200, 0);
        OutputStream out = ex.getResponseBody();
        byte[] chunk = new byte[1024];
        try {
          for (int i = 0; i < 10240; i++) {
            out.write(chunk);
            out.flush();
            Thread.sleep(5);
          }
        } catch (IOException | InterruptedException e) {
          dripClosed.countDown();
        }
      } else {
        long n = drain(ex.getRequestBody());
        StringBuilder sb = new StringBuilder("{\"method\":\"").append(ex.getRequestMethod())
            .append("\",\"receivedBytes\":").append(n).append("}");
        byte[] b = sb.toString().getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.getResponseHeaders().set("Keep-Alive", "timeout=5");
        ex.getResponseHeaders().set("X-Upstream", "test");
        ex.sendResponseHeaders(200, b.length);
        ex.getResponseBody().write(b);
      }
    }
  }

  private static long drain(InputStream in) throws IOException {
    byte[] buf = new byte[65536];
    long n = 0;
    int r;
    while ((r = in.read(buf)) >= 0) {
      n += r;
    }
    return n;
  }

  @Override
  public void close() {
    release.countDown();
    server.stop(0);
    pool.shutdownNow();
  }
}
