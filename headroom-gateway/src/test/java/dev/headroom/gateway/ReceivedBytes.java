package dev.headroom.gateway;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * A barrier for tests that move the gateway's time while a client sends on a real socket: waits
 * until the gateway has read a given number of bytes from its clients (the admin port's
 * {@code headroom_client_received_bytes_total}). Bytes written on loopback reach the gateway's
 * socket only when the kernel delivers them, which a loaded machine can delay by milliseconds;
 * moving virtual time before that would test a different request than the one sent.
 */
final class ReceivedBytes {
  private static final String SERIES = "headroom_client_received_bytes_total ";
  private static final Duration PATIENCE = Duration.ofSeconds(10);
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private ReceivedBytes() {}

  /** Waits until {@code gateway} has read at least {@code total} bytes from its clients. */
  static void await(Gateway gateway, long total) throws Exception {
    URI uri = URI.create("http://127.0.0.1:" + gateway.adminAddress().orElseThrow().getPort() + "/metrics");
    long end = System.nanoTime() + PATIENCE.toNanos();
    long seen = -1;
    while (System.nanoTime() - end < 0) {
      String metrics = HTTP.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString()).body();
      seen = metrics.lines().filter(l -> l.startsWith(SERIES)).findFirst()
          .map(l -> (long) Double.parseDouble(l.substring(SERIES.length()))).orElse(0L);
      if (seen >= total) {
        return;
      }
      Thread.onSpinWait();
    }
    throw new AssertionError("the gateway read " + seen + " bytes from its clients, expected " + total);
  }
}
