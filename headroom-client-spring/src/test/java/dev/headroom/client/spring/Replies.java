package dev.headroom.client.spring;

import dev.headroom.client.TestServer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/** A scripted server's replies (the last one repeats) and the virtual gaps between arrivals. */
final class Replies {

  private Replies() {}

  static TestServer.Handler script(List<Supplier<TestServer.Reply>> replies) {
    int[] n = {0};
    return req -> {
      synchronized (n) {
        return replies.get(Math.min(n[0]++, replies.size() - 1)).get();
      }
    };
  }

  static TestServer.Reply ok(String body) {
    return TestServer.Reply.of(200).body("text/plain", body);
  }

  static TestServer.Reply refused(int status, String retryAfter) {
    return TestServer.Reply.of(status).header("Retry-After", retryAfter)
        .json("{\"type\":\"about:blank\",\"title\":\"Too Many Requests\"}");
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
}
