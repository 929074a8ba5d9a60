package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.enforcement.partition.ApiKeys;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A reload that changes the plan resolver while a request is resolving with the old one, on the
 * machine's PostgreSQL: the request's plan query is held on an advisory lock the test holds, the
 * gateway reloads to a key-file resolver, then the lock is let go. The request gets the plan the
 * old resolver found (it was not closed under it), later requests use the new resolver, and the
 * old resolver's connections close once the request is done.
 */
class PlansReloadGatewayTest {
  static final String URL = PlansSqlGatewayTest.URL;
  static final String TABLE = "headroom_plans_reloadtest_" + ProcessHandle.current().pid();
  /** Names the old resolver's connections in pg_stat_activity. */
  static final String APP = "headroom-reload-test-" + ProcessHandle.current().pid();
  static final long LOCK = ThreadLocalRandom.current().nextLong(1L << 40, 1L << 50);
  @TempDir Path dir;
  TestUpstream upstream;
  final HttpClient client = HttpClient.newHttpClient();

  @BeforeAll
  static void table() throws Exception {
    PlansSqlGatewayTest.createTable(TABLE);
  }

  @AfterAll
  static void drop() throws Exception {
    PlansSqlGatewayTest.dropTable(TABLE);
  }

  @BeforeEach
  void upstream() throws Exception {
    upstream = new TestUpstream();
  }

  @AfterEach
  void stop() {
    upstream.close();
  }

  String config(String resolver) {
    return """
        service: {name: Reload plans}
        listen: {host: 127.0.0.1, port: 0}
        admin: {enabled: false}
        upstreams:
          up: {url: "http://127.0.0.1:%d"}
        policies:
          api: {quota: 100, window: 1m, partition: "api-key|client-ip", why: Limits keep the service available for everyone.}
        routes:
          - {method: GET, path: /echo/**, upstream: up, policies: [api]}
        plans:
          fallback: free
          resolver: %s
          catalog:
            free: {policies: {api: {quota: 2}}}
            pro: {policies: {api: {quota: 50}}}
        """.formatted(upstream.port(), resolver);
  }

  static long count(Statement s, String sql) throws Exception {
    try (ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within 30 s: " + what);
      }
      Thread.sleep(10);
    }
  }

  /** Whether the old resolver's plan query waits on the test's advisory lock. */
  static boolean waiting(Statement s) {
    try {
      return count(s, "SELECT count(*) FROM pg_stat_activity WHERE application_name = '" + APP
          + "' AND wait_event_type = 'Lock'") == 1;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void aRequestResolvingDuringAReloadKeepsTheOldResolverUntilItIsDone() throws Exception {
    // the old resolver waits up to 10 s (its deadline, which the gateway honours): the lock is held
    // only while the test reloads
    String sql = "{type: sql, url: \"" + URL + "?ApplicationName=" + APP + "\", user: postgres, deadline: 10s, query: \""
        + "WITH l AS (SELECT pg_advisory_xact_lock_shared(" + LOCK + ")) SELECT plan FROM " + TABLE
        + ", l WHERE key_hash = ?\"}";
    Path keys = dir.resolve("keys.txt");
    Files.writeString(keys, ApiKeys.sha256("other-key") + " pro\n");
    GatewayConfig next = GatewayConfig.parse(config("{type: api-key-file, file: \""
        + keys.toString().replace("\\", "\\\\") + "\"}"), "reloaded.yaml");
    try (Gateway g = Gateway.builder(GatewayConfig.parse(config(sql), "sql.yaml")).start();
        Connection c = DriverManager.getConnection(URL, "postgres", null); Statement s = c.createStatement()) {
      URI uri = URI.create("http://127.0.0.1:" + g.address().getPort() + "/echo/x");
      s.execute("SELECT pg_advisory_lock(" + LOCK + ")");
      CompletableFuture<HttpResponse<String>> inFlight = null;
      StringBuilder missed = new StringBuilder();
      try {
        // A cold pool on a loaded machine may miss its 250 ms connection timeout: that request gets
        // the fallback plan at once (the declared outcome) and never reaches the lock; send another.
        for (int attempt = 0; attempt < 10 && inFlight == null; attempt++) {
          CompletableFuture<HttpResponse<String>> sent = client.sendAsync(HttpRequest.newBuilder(uri)
              .header("X-Api-Key", "pro-key").timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
          await("the plan query waits on the lock, or the request is answered", () -> sent.isDone() || waiting(s));
          if (sent.isDone()) {
            missed.append(sent.join().headers().firstValue("RateLimit-Policy").orElse("no policy")).append("; ");
          } else {
            inFlight = sent;
          }
        }
        assertThat(inFlight).as("a plan query waiting on the lock; answered at once instead: %s", missed).isNotNull();
        g.reload(next);
      } finally {
        s.execute("SELECT pg_advisory_unlock(" + LOCK + ")");
      }
      HttpResponse<String> r = inFlight.get(60, TimeUnit.SECONDS);
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.headers().firstValue("RateLimit-Policy").orElseThrow()).contains("\"api:pro\";q=50");

      // the new resolver is in force: pro-key is not in its file
      HttpResponse<String> after = client.send(HttpRequest.newBuilder(uri).header("X-Api-Key", "pro-key")
          .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(after.headers().firstValue("RateLimit-Policy").orElseThrow()).contains("\"api:free\";q=2");
      HttpResponse<String> other = client.send(HttpRequest.newBuilder(uri).header("X-Api-Key", "other-key")
          .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(other.headers().firstValue("RateLimit-Policy").orElseThrow()).contains("\"api:pro\";q=50");

      // and the old one closed once the request was done: its pool's connections are gone
      await("the old resolver's connections close", () -> {
        try {
          return count(s, "SELECT count(*) FROM pg_stat_activity WHERE application_name = '" + APP + "'") == 0;
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
    }
  }
}
