package example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.client.HeadroomClient;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Headroom as an application sees it from Maven Central: the limiter of headroom-core and the
 * self-pacing client of headroom-client, both resolved by coordinates through the BOM.
 */
class HeadroomByCoordinatesTest {

  @Test
  void aQuotaLimiterRefusesPastItsQuota() {
    QuotaPolicy policy = QuotaPolicy.builder("per-minute").quota(2).window(Duration.ofMinutes(1)).build();
    QuotaLimiter limiter = QuotaLimiter.inMemory();
    PartitionKey key = PartitionKey.of("caller-1");

    assertTrue(limiter.tryAcquire(policy, key));
    assertTrue(limiter.tryAcquire(policy, key));
    assertFalse(limiter.tryAcquire(policy, key));
  }

  /** draft-ietf-httpapi-ratelimit-headers-09 section 5: the client reads the fields of a real response. */
  @Test
  void aHeadroomClientSendsThroughItsPacing() throws Exception {
    HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/hello", exchange -> {
      byte[] body = "hello".getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().add("RateLimit-Policy", "\"per-minute\";q=10;w=60");
      exchange.getResponseHeaders().add("RateLimit", "\"per-minute\";r=9;t=60");
      exchange.sendResponseHeaders(200, body.length);
      exchange.getResponseBody().write(body);
      exchange.close();
    });
    server.start();
    try {
      HeadroomClient client = HeadroomClient.builder(HttpClient.newHttpClient()).discoverLimits(false).build();
      URI uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/hello");
      HttpResponse<String> response = client.send(HttpRequest.newBuilder(uri).build(),
          HttpResponse.BodyHandlers.ofString());
      assertEquals(200, response.statusCode());
      assertEquals("hello", response.body());
    } finally {
      server.stop(0);
    }
  }
}
