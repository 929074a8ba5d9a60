package dev.headroom.plans;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.ManualTicker;
import dev.headroom.enforcement.partition.ApiKeys;
import dev.headroom.enforcement.partition.RequestView;
import dev.headroom.enforcement.plan.PlanResolution;
import java.net.ServerSocket;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The SQL resolver against the machine's PostgreSQL (127.0.0.1:5432, database {@code test}, trust
 * authentication): plans by key hash, the cache with its TTL and negative caching, and the declared
 * outcome when the database is down (a closed port), slow ({@code pg_sleep} past the deadline) or
 * the query fails: {@link PlanResolution.Unavailable}, which the host maps to the fallback plan.
 * Its own table, named for this test class and process; never touches anything else.
 */
class SqlResolverTest {
  static final String URL = "jdbc:postgresql://127.0.0.1:5432/test";
  static final String TABLE = "headroom_plans_sqlresolvertest_" + ProcessHandle.current().pid();
  static final String QUERY = "SELECT plan FROM " + TABLE + " WHERE key_hash = ?";

  @BeforeAll
  static void table() throws Exception {
    try (Connection c = DriverManager.getConnection(URL, "postgres", null); Statement s = c.createStatement()) {
      s.execute("DROP TABLE IF EXISTS " + TABLE);
      s.execute("CREATE TABLE " + TABLE + " (key_hash char(64) PRIMARY KEY, plan text NOT NULL)");
      s.execute("INSERT INTO " + TABLE + " VALUES ('" + ApiKeys.sha256("pro-key") + "', 'pro'), ('"
          + ApiKeys.sha256("acme-key") + "', 'acme-contract')");
    }
  }

  @AfterAll
  static void drop() throws Exception {
    try (Connection c = DriverManager.getConnection(URL, "postgres", null); Statement s = c.createStatement()) {
      s.execute("DROP TABLE IF EXISTS " + TABLE);
    }
  }

  static void insert(String key, String plan) throws Exception {
    try (Connection c = DriverManager.getConnection(URL, "postgres", null); Statement s = c.createStatement()) {
      s.execute("INSERT INTO " + TABLE + " VALUES ('" + ApiKeys.sha256(key) + "', '" + plan + "')");
    }
  }

  static PlanResolution resolve(SqlResolver r, String key) {
    return r.resolve(RequestView.builder().header("X-Api-Key", key).build()).toCompletableFuture().join();
  }

  @Test
  void aKeysPlanComesFromTheTableByItsHash() {
    try (SqlResolver r = SqlResolver.builder(URL, QUERY).user("postgres").deadline(Duration.ofSeconds(5)).build()) {
      assertThat(resolve(r, "pro-key")).isEqualTo(new PlanResolution.Named("pro"));
      assertThat(resolve(r, "acme-key")).isEqualTo(new PlanResolution.Named("acme-contract"));
      assertThat(resolve(r, "unknown")).isEqualTo(PlanResolution.anonymous());
      assertThat(r.resolve(RequestView.builder().build()).toCompletableFuture().join()).isEqualTo(PlanResolution.anonymous());
    }
  }

  @Test
  void foundPlansAndUnknownKeysAreCachedForTheirTtl() throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    try (SqlResolver r = SqlResolver.builder(URL, QUERY).user("postgres").deadline(Duration.ofSeconds(5))
        .cache(100, Duration.ofSeconds(60), Duration.ofSeconds(10)).ticker(ticker).build()) {
      assertThat(resolve(r, "late-key")).isEqualTo(PlanResolution.anonymous()); // negative, cached 10 s
      insert("late-key", "pro");
      ticker.advance(Duration.ofSeconds(9));
      assertThat(resolve(r, "late-key")).isEqualTo(PlanResolution.anonymous());
      ticker.advance(Duration.ofSeconds(1));
      assertThat(resolve(r, "late-key")).isEqualTo(new PlanResolution.Named("pro"));
      assertThat(r.cached()).isEqualTo(1);
    }
  }

  @Test
  void theCacheIsBounded() {
    try (SqlResolver r = SqlResolver.builder(URL, QUERY).user("postgres").deadline(Duration.ofSeconds(5))
        .cache(3, Duration.ofSeconds(60), Duration.ofSeconds(60)).build()) {
      for (int i = 0; i < 10; i++) {
        resolve(r, "k" + i);
      }
      assertThat(r.cached()).isEqualTo(3);
    }
  }

  @Test
  void aDatabaseThatIsDownIsUnavailableWithinTheDeadline() throws Exception {
    int closed;
    try (ServerSocket s = new ServerSocket(0)) {
      closed = s.getLocalPort();
    }
    try (SqlResolver r = SqlResolver.builder("jdbc:postgresql://127.0.0.1:" + closed + "/test", QUERY).user("postgres")
        .deadline(Duration.ofMillis(100)).build()) {
      PlanResolution res = r.resolve(RequestView.builder().header("X-Api-Key", "pro-key").build())
          .toCompletableFuture().get(5, TimeUnit.SECONDS);
      assertThat(res).isInstanceOf(PlanResolution.Unavailable.class);
      // with a longer deadline the connection failure itself is the answer
      try (SqlResolver patient = SqlResolver.builder("jdbc:postgresql://127.0.0.1:" + closed + "/test", QUERY)
          .user("postgres").deadline(Duration.ofSeconds(5)).build()) {
        assertThat(((PlanResolution.Unavailable) resolve(patient, "pro-key")).reason()).contains("SQLState 08");
      }
    }
  }

  @Test
  void aSlowDatabaseIsUnavailableAtTheDeadlineAndItsAnswerServesTheNextRequest() throws Exception {
    String slow = "SELECT plan FROM (SELECT pg_sleep(0.5)) AS s, " + TABLE + " WHERE key_hash = ?";
    try (SqlResolver r = SqlResolver.builder(URL, slow).user("postgres").deadline(Duration.ofMillis(100)).build()) {
      PlanResolution first = resolve(r, "pro-key");
      assertThat(first).isInstanceOf(PlanResolution.Unavailable.class);
      assertThat(((PlanResolution.Unavailable) first).reason()).contains("did not answer within 100 ms");
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (r.cached() == 0 && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertThat(resolve(r, "pro-key")).isEqualTo(new PlanResolution.Named("pro"));
    }
  }

  @Test
  void aSqlErrorIsUnavailableNamingItsState() {
    try (SqlResolver r = SqlResolver.builder(URL, "SELECT plan FROM no_such_table_headroom WHERE key_hash = ?")
        .user("postgres").deadline(Duration.ofSeconds(5)).build()) {
      PlanResolution res = resolve(r, "pro-key");
      assertThat(((PlanResolution.Unavailable) res).reason()).contains("SQLState 42P01");
    }
  }

  @Test
  void badSettingsAreRefusedNamingThem() {
    assertThatThrownBy(() -> SqlResolver.builder("jdbc:mysql://x/y", QUERY).build()).hasMessageStartingWith("url: 'jdbc:mysql://x/y'; expected");
    assertThatThrownBy(() -> SqlResolver.builder(URL, "SELECT plan FROM t").build()).hasMessageContaining("exactly one ?");
    assertThatThrownBy(() -> SqlResolver.builder(URL, QUERY).poolSize(0).build()).hasMessage("poolSize: 0; expected 1 to 64");
    assertThatThrownBy(() -> SqlResolver.builder(URL, QUERY).deadline(Duration.ZERO).build()).hasMessage("deadline: PT0S; expected 1ms to 10s");
  }
}
