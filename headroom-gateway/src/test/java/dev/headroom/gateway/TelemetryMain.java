package dev.headroom.gateway;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;

/**
 * A gateway in a process of its own, so that the classes one exchange loads can be listed
 * ({@code -verbose:class}): starts from the configuration file in the first argument, sends
 * {@code GET} of the second through it, prints {@code status N}, and stops.
 */
public final class TelemetryMain {
  private TelemetryMain() {}

  public static void main(String[] args) throws Exception {
    try (Gateway g = Gateway.builder(GatewayConfig.load(Path.of(args[0]))).start()) {
      HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
          URI.create("http://127.0.0.1:" + g.address().getPort() + args[1])).build(), HttpResponse.BodyHandlers.ofString());
      System.out.println("status " + r.statusCode());
    }
  }
}
