package dev.headroom.gateway;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.ManualTicker;
import dev.headroom.gateway.ProxyFramingTest.Head;
import dev.headroom.gateway.ProxyFramingTest.Message;
import dev.headroom.gateway.ProxyFramingTest.RawUpstream;
import dev.headroom.gateway.ProxyFramingTest.Wire;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How the gateway closes a connection after a response that ends it (RFC 9112 section 9.6,
 * "Tear-down"), over real sockets with the timers in virtual time: it half-closes (the client
 * reads the whole response, then the end of the stream, never a reset, even while it is still
 * sending), drops what still arrives, and closes fully when the client closes, when two seconds
 * of the gateway's time have passed, or when a mebibyte was dropped.
 */
class LingeringCloseTest {
  private static final int TIMEOUT_MILLIS = 10_000;
  /** The gateway's linger bound in time (LingeringClose.TIME). */
  private static final Duration LINGER = Duration.ofSeconds(2);
  /** The gateway's linger bound in bytes (LingeringClose.BYTES). */
  private static final int LINGER_BYTES = 1 << 20;
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;
  RawUpstream upstream;
  ManualTimers timers;
  Gateway gateway;

  @BeforeEach
  void start() throws Exception {
    upstream = new RawUpstream();
    upstream.answer("/up", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    Path config = dir.resolve("linger.yaml");
    Files.writeString(config, """
        service: {name: Linger}
        listen: {host: 127.0.0.1, port: 0}
        admin: {host: 127.0.0.1, port: 0}
        timeouts: {connect: 10s, response: 10s, idle: 10s}
        limits: {maxBodyBytes: 1024}
        upstreams:
          up: {url: "http://127.0.0.1:%d"}
        routes:
          - {name: all, methods: [GET, POST], path: "/**", upstream: up}
        """.formatted(upstream.port()));
    timers = new ManualTimers(ManualTicker.atFixedInstant());
    gateway = Gateway.builder(GatewayConfig.load(config)).threads(1).ticker(timers.ticker()).timers(timers).start();
  }

  @AfterEach
  void stop() {
    if (gateway != null) {
      gateway.close();
    }
    upstream.close();
  }

  @Test
  void aClientStillSendingARefusedBodyReadsTheWhole413AndThenTheEndNotAReset_rfc9112_9_6() throws Exception {
    try (Client c = new Client()) {
      // a declared body over the bound is refused unread: the gateway answers and closes while
      // the client is still sending it (half a mebibyte, within the linger's byte bound)
      c.send("POST /up HTTP/1.1\r\nHost: test\r\nContent-Length: 10000000\r\n\r\n");
      CompletableFuture<Void> sending = c.sendInBackground(LINGER_BYTES / 2);
      Message r = c.read();
      assertThat(r.status()).isEqualTo(413);
      assertThat(JSON.readTree(r.data()).get("error").asText()).isEqualTo("content_too_large");
      assertThat(r.head().get("connection")).isEqualTo("close");
      sending.get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS); // all of it was taken (and dropped)
      c.assertEndOfStream(); // a FIN, not a reset
    }
    assertThat(upstream.connections()).isZero();
  }

  @Test
  void aClientThatNeverClosesIsCutOnceTheLingerTimeHasPassed_rfc9112_9_6() throws Exception {
    try (Client c = new Client()) {
      // Content-Length beside Transfer-Encoding: 400 and the connection ends (RFC 9112 section 6.1)
      c.send("POST /up HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n");
      assertThat(c.read().status()).isEqualTo(400);
      c.assertEndOfStream();
      c.send("still here"); // dropped: the gateway lingers
      timers.advance(LINGER);
      // closed now: what the client sends is answered with a reset, long before the byte bound
      assertThatThrownBy(() -> c.sendUntilRefused(LINGER_BYTES / 2)).isInstanceOf(IOException.class);
    }
  }

  @Test
  void aClientThatKeepsSendingIsCutOnceTheLingerByteBoundIsDropped_rfc9112_9_6() throws Exception {
    try (Client c = new Client()) {
      c.send("POST /up HTTP/1.1\r\nHost: test\r\nContent-Length: 10000000\r\n\r\n");
      CompletableFuture<Void> sending = c.sendInBackground(8 * LINGER_BYTES);
      Message r = c.read();
      assertThat(r.status()).isEqualTo(413); // read whole before the cut
      // no time passes on the gateway's timers: only the byte bound can end the linger
      assertThat(sending).failsWithin(Duration.ofMillis(TIMEOUT_MILLIS)).withThrowableOfType(Exception.class)
          .withRootCauseInstanceOf(IOException.class);
    }
  }

  @Test
  void aHeadStalledAtALineEndGets408AtTheIdleTimeoutAndALingeringClose_rfc9110_15_5_9() throws Exception {
    try (Client c = new Client()) {
      timers.awaitPending(1); // the gateway has taken the connection
      // whole lines only: the decoder keeps none of these bytes, yet a request has begun
      String head = "GET /up HTTP/1.1\r\nHost: test\r\n";
      c.send(head);
      ReceivedBytes.await(gateway, head.length()); // time moves once the gateway has read it
      timers.advance(Duration.ofSeconds(10));
      Message r = c.read();
      assertThat(r.status()).isEqualTo(408);
      c.assertEndOfStream();
    }
    assertThat(upstream.connections()).isZero();
  }

  /** A client on a raw socket; it reads with a real-time patience far above anything the gateway does. */
  final class Client implements AutoCloseable {
    private final Socket socket = new Socket();
    private final InputStream in;
    private final OutputStream out;

    Client() throws IOException {
      socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), gateway.address().getPort()),
          TIMEOUT_MILLIS);
      socket.setSoTimeout(TIMEOUT_MILLIS);
      in = new BufferedInputStream(socket.getInputStream());
      out = socket.getOutputStream();
    }

    void send(String s) throws IOException {
      out.write(s.getBytes(ISO_8859_1));
      out.flush();
    }

    /** Sends {@code n} bytes in 1 KiB writes on another thread; completes when all were written. */
    CompletableFuture<Void> sendInBackground(int n) {
      return CompletableFuture.runAsync(() -> {
        try {
          sendUntilRefused(n);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
    }

    /** Sends up to {@code n} bytes in 1 KiB writes; a reset from the gateway ends it with an exception. */
    void sendUntilRefused(int n) throws IOException {
      byte[] kib = new byte[1024];
      Arrays.fill(kib, (byte) 'x');
      for (int sent = 0; sent < n; sent += kib.length) {
        out.write(kib);
        out.flush();
      }
    }

    Message read() throws IOException {
      Head h = Wire.head(in);
      assertThat(h).as("a response before the end of the stream").isNotNull();
      return Wire.body(in, h, false);
    }

    void assertEndOfStream() throws IOException {
      assertThat(in.read()).as("the gateway ends the stream (FIN)").isEqualTo(-1);
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }
}
