package dev.headroom.client;

import dev.headroom.ManualTicker;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/** A server answering with a script of replies (the last one repeats), and arrival-time helpers. */
final class Scripted {

  static final HttpClient HTTP = HttpClient.newHttpClient();

  private Scripted() {}

  static TestServer.Handler script(List<Supplier<TestServer.Reply>> replies) {
    int[] n = {0};
    return req -> {
      int i;
      synchronized (n) {
        i = Math.min(n[0]++, replies.size() - 1);
      }
      return replies.get(i).get();
    };
  }

  static TestServer.Reply ok() {
    return TestServer.Reply.of(200).body("text/plain", "ok");
  }

  /** Seconds (virtual) between consecutive arrivals at the server. */
  static List<Double> gaps(TestServer server) {
    List<TestServer.Logged> log = server.log();
    List<Double> out = new ArrayList<>();
    for (int i = 1; i < log.size(); i++) {
      out.add((log.get(i).request().atNanos() - log.get(i - 1).request().atNanos()) / 1e9);
    }
    return out;
  }

  static HeadroomClient.Builder client(ManualTicker ticker) {
    return HeadroomClient.builder(HTTP).ticker(ticker).scheduler(Scheduler.advancing(ticker))
        .retry(RetryPolicy.builder().jitter(0).build());
  }

  /** {@link Scheduler#advancing} on {@code ticker}, adding every positive delay it is asked for to {@code waits}. */
  static Scheduler recording(ManualTicker ticker, List<Duration> waits) {
    return delay -> {
      if (!delay.isZero() && !delay.isNegative()) {
        waits.add(delay);
      }
      return Scheduler.advancing(ticker).delay(delay);
    };
  }

  static HttpRequest get(TestServer server, String path) {
    return HttpRequest.newBuilder(server.uri(path)).build();
  }
}
