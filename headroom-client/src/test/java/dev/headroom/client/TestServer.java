package dev.headroom.client;

import dev.headroom.Ticker;
import dev.headroom.http.RetryAfter;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A real HTTP/1.1 server on loopback, port 0, scripted by a handler; records every request and
 * reply. Shared with the conformance checker's tests through this module's test-jar.
 *
 * <p>It speaks HTTP/1.1 over a plain {@link ServerSocket} (persistent connections, Content-Length
 * and chunked request bodies) rather than through the JDK's {@code HttpServer}, because that one
 * overwrites every response's {@code Date} with the wall clock: a server's {@code Date} must come
 * from the same clock as the instants it states (Retry-After dates, epoch resets), which in these
 * tests is the shared virtual {@link Ticker}. A reply without a {@code Date} gets one from it.
 */
public final class TestServer implements AutoCloseable {

  public interface Handler {
    Reply handle(Request request) throws IOException;
  }

  /** One request; header names compare case-insensitively. */
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

  /** Longest request head or body line read; longer is answered 431 and the connection closed. */
  private static final int MAX_LINE = 64 * 1024;

  private final ServerSocket socket;
  private final ExecutorService executor = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "test-server");
    t.setDaemon(true);
    return t;
  });
  private final Set<Socket> connections = ConcurrentHashMap.newKeySet();
  private final List<Logged> log = new ArrayList<>();
  private final Ticker ticker;
  private final Handler handler;

  public TestServer(Ticker ticker, Handler handler) throws IOException {
    this.ticker = ticker;
    this.handler = handler;
    socket = new ServerSocket(0, 64, InetAddress.getLoopbackAddress());
    executor.execute(this::accept);
  }

  private void accept() {
    while (!socket.isClosed()) {
      try {
        Socket s = socket.accept();
        connections.add(s);
        executor.execute(() -> connection(s));
      } catch (IOException closed) {
        return;
      }
    }
  }

  private void connection(Socket s) {
    try (s) {
      s.setTcpNoDelay(true);
      InputStream in = new BufferedInputStream(s.getInputStream());
      OutputStream out = s.getOutputStream();
      while (exchange(in, out)) {
        out.flush();
      }
    } catch (SocketException reset) {
      // the client went away
    } catch (IOException e) {
      // a broken request: the connection is dropped, as a server would
    } finally {
      connections.remove(s);
    }
  }

  /** Reads one request and answers it; false at the end of the connection. */
  private boolean exchange(InputStream in, OutputStream out) throws IOException {
    String requestLine = line(in);
    if (requestLine == null) {
      return false;
    }
    String[] parts = requestLine.split(" ");
    if (parts.length != 3) {
      throw new IOException("request line: " + requestLine);
    }
    Map<String, List<String>> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    for (String h = line(in); h != null && !h.isEmpty(); h = line(in)) {
      int colon = h.indexOf(':');
      if (colon > 0) {
        headers.computeIfAbsent(h.substring(0, colon).strip(), k -> new ArrayList<>()).add(h.substring(colon + 1).strip());
      }
    }
    readBody(in, headers);
    URI target = URI.create(parts[1]);
    Request req = new Request(parts[0], target.getPath(), target.getRawQuery(), Collections.unmodifiableMap(headers),
        ticker.read());
    Reply reply;
    try {
      reply = handler.handle(req);
    } catch (RuntimeException e) {
      reply = Reply.of(500).body("text/plain", e.toString());
    }
    synchronized (log) {
      log.add(new Logged(req, reply.status));
    }
    write(out, req, reply);
    return !headers.getOrDefault("Connection", List.of()).contains("close");
  }

  private void write(OutputStream out, Request req, Reply reply) throws IOException {
    StringBuilder head = new StringBuilder("HTTP/1.1 ").append(reply.status).append(' ').append(reason(reply.status)).append("\r\n");
    boolean dated = reply.headers.keySet().stream().anyMatch(n -> n.equalsIgnoreCase("Date"));
    if (!dated) {
      head.append("Date: ").append(RetryAfter.formatHttpDate(ticker.instant())).append("\r\n");
    }
    reply.headers.forEach((k, v) -> v.forEach(x -> head.append(k).append(": ").append(x).append("\r\n")));
    boolean bodiless = reply.status == 204 || reply.status == 304 || reply.status < 200;
    if (!bodiless) {
      head.append("Content-Length: ").append(reply.body.length).append("\r\n");
    }
    head.append("\r\n");
    out.write(head.toString().getBytes(StandardCharsets.ISO_8859_1));
    if (!bodiless && !req.method().equals("HEAD")) {
      out.write(reply.body);
    }
  }

  private static void readBody(InputStream in, Map<String, List<String>> headers) throws IOException {
    List<String> te = headers.get("Transfer-Encoding");
    if (te != null && te.stream().anyMatch(v -> v.toLowerCase(Locale.ROOT).contains("chunked"))) {
      for (;;) {
        String size = line(in);
        if (size == null) {
          throw new IOException("chunked body cut");
        }
        int n = Integer.parseInt(size.split(";")[0].strip(), 16);
        if (n == 0) {
          for (String t = line(in); t != null && !t.isEmpty(); t = line(in)) {
            // trailer fields are read and dropped
          }
          return;
        }
        in.readNBytes(n);
        line(in);
      }
    }
    List<String> cl = headers.get("Content-Length");
    if (cl != null && !cl.isEmpty()) {
      in.readNBytes(Integer.parseInt(cl.get(0)));
    }
  }

  /** One CRLF-terminated line, without the CRLF; null at the end of the stream. */
  private static String line(InputStream in) throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    for (;;) {
      int c = in.read();
      if (c < 0) {
        return b.size() == 0 ? null : b.toString(StandardCharsets.ISO_8859_1);
      }
      if (c == '\n') {
        String s = b.toString(StandardCharsets.ISO_8859_1);
        return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
      }
      if (b.size() >= MAX_LINE) {
        throw new IOException("line longer than " + MAX_LINE);
      }
      b.write(c);
    }
  }

  private static String reason(int status) {
    return switch (status) {
      case 200 -> "OK";
      case 204 -> "No Content";
      case 304 -> "Not Modified";
      case 403 -> "Forbidden";
      case 404 -> "Not Found";
      case 429 -> "Too Many Requests";
      case 500 -> "Internal Server Error";
      case 503 -> "Service Unavailable";
      default -> "Status";
    };
  }

  public URI uri(String path) {
    return URI.create("http://127.0.0.1:" + socket.getLocalPort() + path);
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
    try {
      socket.close();
    } catch (IOException e) {
      // closing a listening socket only fails when it is already closed
    }
    for (Socket s : connections) {
      try {
        s.close();
      } catch (IOException e) {
        // already closed
      }
    }
    executor.shutdownNow();
  }
}
