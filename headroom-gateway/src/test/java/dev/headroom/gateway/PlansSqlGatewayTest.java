package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.headroom.ManualTicker;
import dev.headroom.enforcement.partition.ApiKeys;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Plans from PostgreSQL through the gateway (the machine's server, 127.0.0.1:5432, database
 * {@code test}): a key's plan is enforced; the database down (a closed port), slow
 * ({@code pg_sleep} past the deadline) or failing (no such table) gives the fallback plan, never a
 * 500 and never an unlimited caller. Its own table, named for this class and process.
 */
class PlansSqlGatewayTest {
  static final String URL = "jdbc:postgresql://127.0.0.1:5432/test";
  static final String TABLE = "headroom_plans_gatewaytest_" + ProcessHandle.current().pid();
  TestUpstream upstream;
  final HttpClient client = HttpClient.newHttpClient();

  @BeforeAll
  static void table() throws Exception {
    createTable(TABLE);
  }

  @AfterAll
  static void drop() throws Exception {
    dropTable(TABLE);
  }

  /** A plan table of {@code key_hash} and {@code plan} in which {@code pro-key} is on pro. */
  static void createTable(String table) throws Exception {
    try (Connection c = DriverManager.getConnection(URL, "postgres", null); Statement s = c.createStatement()) {
      s.execute("DROP TABLE IF EXISTS " + table);
      s.execute("CREATE TABLE " + table + " (key_hash char(64) PRIMARY KEY, plan text NOT NULL)");
      s.execute("INSERT INTO " + table + " VALUES ('" + ApiKeys.sha256("pro-key") + "', 'pro')");
    }
  }

  static void dropTable(String table) throws Exception {
    try (Connection c = DriverManager.getConnection(URL, "postgres", null); Statement s = c.createStatement()) {
      s.execute("DROP TABLE IF EXISTS " + table);
    }
  }

  @BeforeEach
  void upstream() throws Exception {
    upstream = new TestUpstream();
  }

  @AfterEach
  void stop() {
    upstream.close();
  }

  String config(String url, String query, String deadline) {
    return """
        service: {name: Sql plans}
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
          resolver: {type: sql, url: "%s", user: postgres, query: "%s", deadline: %s, cache: {ttl: 1m, negativeTtl: 5s}}
          catalog:
            free: {policies: {api: {quota: 2}}}
            pro: {policies: {api: {quota: 50}}}
        """.formatted(upstream.port(), url, query, deadline);
  }

  HttpResponse<String> get(Gateway g, String key) throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + g.address().getPort() + "/echo/x"))
        .header("X-Api-Key", key).build(), HttpResponse.BodyHandlers.ofString());
  }

  String policyOf(Gateway g, String key) throws Exception {
    HttpResponse<String> r = get(g, key);
    assertThat(r.statusCode()).isEqualTo(200);
    return r.headers().firstValue("RateLimit-Policy").orElseThrow();
  }

  @Test
  void aKeysPlanComesFromTheDatabase() throws Exception {
    String yaml = config(URL, "SELECT plan FROM " + TABLE + " WHERE key_hash = ?", "2s");
    assertThat(Schemas.CONFIG.validate(new ObjectMapper(new YAMLFactory()).readTree(yaml))).isEmpty();
    try (Gateway g = Gateway.builder(GatewayConfig.parse(yaml, "sql.yaml")).ticker(ManualTicker.atFixedInstant()).start()) {
      assertThat(policyOf(g, "pro-key")).contains("\"api:pro\";q=50");
      assertThat(policyOf(g, "stranger")).contains("\"api:free\";q=2");
    }
  }

  @Test
  void aDatabaseThatIsDownGivesTheFallbackPlanNeverUnlimited() throws Exception {
    int closed;
    try (ServerSocket s = new ServerSocket(0)) {
      closed = s.getLocalPort();
    }
    String yaml = config("jdbc:postgresql://127.0.0.1:" + closed + "/test", "SELECT plan FROM " + TABLE + " WHERE key_hash = ?", "100ms");
    try (Gateway g = Gateway.builder(GatewayConfig.parse(yaml, "down.yaml")).ticker(ManualTicker.atFixedInstant()).start()) {
      assertThat(policyOf(g, "pro-key")).contains("\"api:free\";q=2");
      get(g, "pro-key");
      assertThat(get(g, "pro-key").statusCode()).isEqualTo(429);
    }
  }

  @Test
  void aSlowDatabaseGivesTheFallbackPlanAtTheDeadline() throws Exception {
    String slow = "SELECT plan FROM (SELECT pg_sleep(1)) AS s, " + TABLE + " WHERE key_hash = ?";
    try (Gateway g = Gateway.builder(GatewayConfig.parse(config(URL, slow, "100ms"), "slow.yaml"))
        .ticker(ManualTicker.atFixedInstant()).start()) {
      assertThat(policyOf(g, "pro-key")).contains("\"api:free\";q=2");
    }
  }

  @Test
  void aQueryThatFailsGivesTheFallbackPlan() throws Exception {
    try (Gateway g = Gateway.builder(GatewayConfig.parse(config(URL, "SELECT plan FROM no_such_table_headroom WHERE key_hash = ?", "2s"),
        "bad.yaml")).ticker(ManualTicker.atFixedInstant()).start()) {
      assertThat(policyOf(g, "pro-key")).contains("\"api:free\";q=2");
    }
  }
}
