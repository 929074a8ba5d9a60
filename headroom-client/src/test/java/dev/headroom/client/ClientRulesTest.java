package dev.headroom.client;

import static dev.headroom.client.Scripted.client;
import static dev.headroom.client.Scripted.gaps;
import static dev.headroom.client.Scripted.get;
import static dev.headroom.client.Scripted.ok;
import static dev.headroom.client.Scripted.script;
import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.ManualTicker;
import dev.headroom.http.RetryAfter;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * The client rules of draft-ietf-httpapi-ratelimit-headers-09 sections 7, 7.1, 7.3 and 8.5.1,
 * against a scripted loopback server in virtual time. Gaps are the seconds between arrivals at the
 * server, read from the shared {@link ManualTicker}.
 */
class ClientRulesTest {

  private final ManualTicker ticker = ManualTicker.atFixedInstant();

  private List<Double> run(HeadroomClient.Builder builder, int requests, List<Supplier<TestServer.Reply>> replies)
      throws Exception {
    try (TestServer server = new TestServer(ticker, script(replies))) {
      HeadroomClient client = builder.build();
      for (int i = 0; i < requests; i++) {
        client.send(get(server, "/api/items"), BodyHandlers.discarding());
      }
      return gaps(server);
    }
  }

  @Test
  void section7RetryAfterTakesPrecedenceOverTheReset() throws Exception {
    List<Double> gaps = run(client(ticker).pacing(Pacing.BURST), 2, List.of(
        () -> ok().header("RateLimit-Policy", "\"default\";q=10;w=60").header("RateLimit", "\"default\";r=0;t=2")
            .header("Retry-After", "5"),
        Scripted::ok));
    assertThat(gaps).containsExactly(5.0);
  }

  @Test
  void section7RetryAfterAsAnHttpDateIsReadAgainstTheInjectedClock() throws Exception {
    List<Double> gaps = run(client(ticker), 2, List.of(
        () -> ok().header("Retry-After", RetryAfter.formatHttpDate(ticker.instant().plusSeconds(7))),
        Scripted::ok));
    assertThat(gaps).containsExactly(7.0);
  }

  @Test
  void section7ServiceLimitIsObeyedUntilTheReset() throws Exception {
    List<Double> gaps = run(client(ticker).pacing(Pacing.BURST), 3, List.of(
        () -> ok().header("RateLimit", "\"default\";r=1;t=10"),
        Scripted::ok));
    // r=1: one more now; then nothing is known to remain until t; the third waits for the reset.
    assertThat(gaps).containsExactly(0.0, 10.0);
  }

  @Test
  void section7NoAssumptionThatTheNextResponseCarriesTheFields() throws Exception {
    // Only the first response has fields; the budget it set is counted down locally, then, past
    // the reset with no quota known, one probe finds out, and without fields nothing holds the rest.
    List<Double> gaps = run(client(ticker).pacing(Pacing.BURST), 5, List.of(
        () -> ok().header("RateLimit", "\"default\";r=2;t=30"),
        Scripted::ok));
    assertThat(gaps).containsExactly(0.0, 0.0, 30.0, 0.0);
  }

  @Test
  void section7MalformedFieldsAreIgnored() throws Exception {
    List<Double> gaps = run(client(ticker), 3, List.of(
        () -> ok().header("RateLimit", "\"default\";r=zero;t=600").header("Retry-After", "soon"),
        () -> ok().header("RateLimit", "default;r=0;t=600, (\"inner\")").header("RateLimit", "\"x\";r=-1;t=600"),
        Scripted::ok));
    // The second response's first member is a Token identifier (kept, with a warning) with r=0:
    // that one is well-formed and is obeyed; the Inner List and the negative r are ignored.
    assertThat(gaps.get(0)).isZero();
    assertThat(gaps.get(1)).isEqualTo(600.0);
  }

  @Test
  void section73FieldsOnACachedResponseAreIgnored() throws Exception {
    List<Double> gaps = run(client(ticker), 2, List.of(
        () -> ok().header("Age", "30").header("RateLimit", "\"default\";r=0;t=600").header("Retry-After", "600"),
        Scripted::ok));
    assertThat(gaps).containsExactly(0.0);
  }

  @Test
  void section851AResetBeyondTenMinutesIsProbedAtOnceNotSleptOn() throws Exception {
    List<Double> gaps = run(client(ticker), 3, List.of(
        () -> ok().header("RateLimit", "\"default\";r=0;t=86400"),
        Scripted::ok));
    // The next request goes alone as a probe, now; its answer (no fields) holds nothing back.
    assertThat(gaps).containsExactly(0.0, 0.0);
  }

  @Test
  void section851CeilingsAreConfigurable() throws Exception {
    List<Double> gaps = run(client(ticker).ceilings(Ceilings.builder().maxReset(Duration.ofSeconds(30))
        .maxRetryAfter(Duration.ofSeconds(45)).build()), 3, List.of(
            () -> ok().header("RateLimit", "\"default\";r=0;t=86400"),
            () -> ok().header("Retry-After", "1000000"),
            Scripted::ok));
    // A reset beyond maxReset is probed at once; a Retry-After beyond maxRetryAfter is waited for up to it.
    assertThat(gaps).containsExactly(0.0, 45.0);
  }

  @Test
  void section851RemainingAboveTheQuotaIsClampedToTheQuota() throws Exception {
    List<Double> gaps = run(client(ticker).pacing(Pacing.BURST), 4, List.of(
        () -> ok().header("RateLimit-Policy", "\"default\";q=2;w=20").header("RateLimit", "\"default\";r=1000000;t=20"),
        Scripted::ok));
    assertThat(gaps).containsExactly(0.0, 0.0, 20.0);
  }

  @Test
  void section851RequestRateIsCappedWhateverTheServerSays() throws Exception {
    List<Double> gaps = run(client(ticker).pacing(Pacing.BURST)
        .ceilings(Ceilings.builder().maxRequestsPerSecond(4).build()), 5, List.of(
            () -> ok().header("RateLimit", "\"default\";r=999999999;t=1")));
    assertThat(gaps).containsExactly(0.25, 0.25, 0.25, 0.25);
  }

  @Test
  void evenPacingSpreadsTheRemainingUnitsUntilTheReset() throws Exception {
    List<Double> gaps = run(client(ticker).pacing(Pacing.EVEN), 4, List.of(
        () -> ok().header("RateLimit", "\"default\";r=4;t=8"),
        Scripted::ok));
    // Four units before the reset, which t=8 (rounded up) says is after 7 s at the earliest: the
    // next three go 1.75 s apart (no fields after the first), the fourth unit is left at 7 s, within
    // the window, not at its reset, where it would be lost.
    assertThat(gaps).containsExactly(1.75, 1.75, 1.75);
  }

  @Test
  void section71BudgetsAreKeptPerPartitionKey() throws Exception {
    try (TestServer server = new TestServer(ticker, req -> {
      String user = req.headers().getOrDefault("X-user", List.of("?")).get(0);
      return user.equals("a") ? ok().header("RateLimit", "\"default\";r=0;t=60;pk=:YQ==:")
          : ok().header("RateLimit", "\"default\";r=5;t=60;pk=:Yg==:");
    })) {
      HeadroomClient client = client(ticker).pacing(Pacing.BURST).scope(r -> r.uri().getAuthority() + " " + r.headers().firstValue("X-User").orElse(""))
          .build();
      HttpRequest a = HttpRequest.newBuilder(server.uri("/api/items")).header("X-User", "a").build();
      HttpRequest b = HttpRequest.newBuilder(server.uri("/api/items")).header("X-User", "b").build();
      client.send(a, BodyHandlers.discarding());
      client.send(b, BodyHandlers.discarding());
      client.send(b, BodyHandlers.discarding());
      assertThat(gaps(server)).containsExactly(0.0, 0.0);
      assertThat(client.budgets().snapshot(a)).singleElement().satisfies(x -> {
        assertThat(x.policy()).isEqualTo("default");
        assertThat(x.partitionKey()).contains("YQ==");
        assertThat(x.remaining()).isZero();
      });
      assertThat(client.budgets().snapshot(b)).singleElement().satisfies(x -> {
        assertThat(x.partitionKey()).contains("Yg==");
        assertThat(x.remaining()).isEqualTo(5);
      });
    }
  }

  @Test
  void everyDialectIsReadIntoABudget() throws Exception {
    List<List<String[]>> dialects = List.of(
        List.of(new String[] {"RateLimit-Policy", "\"burst\";q=100;qu=\"requests\";w=60"},
            new String[] {"RateLimit", "\"burst\";r=7;t=30"}),
        // The editor's draft after -11 (ietf-wg-httpapi/ratelimit-headers pull request 166): a, w, c.
        List.of(new String[] {"RateLimit-Policy", "\"burst\";q=100;w=60"},
            new String[] {"RateLimit", "\"burst\";a=7;w=30;c=1"}, new String[] {"RateLimit-Partition", "\"burst\";user_id"}),
        List.of(new String[] {"RateLimit", "limit=10, remaining=7, reset=30"}, new String[] {"RateLimit-Policy", "10;w=3600"}),
        List.of(new String[] {"RateLimit-Limit", "10"}, new String[] {"RateLimit-Remaining", "7"},
            new String[] {"RateLimit-Reset", "30"}, new String[] {"RateLimit-Policy", "10;w=60"}),
        List.of(new String[] {"RateLimit-Limit", "10, 10;w=60"}, new String[] {"RateLimit-Remaining", "7"},
            new String[] {"RateLimit-Reset", "30"}),
        List.of(new String[] {"X-RateLimit-Limit", "10"}, new String[] {"X-RateLimit-Remaining", "7"},
            new String[] {"X-RateLimit-Reset", Long.toString(ticker.instant().getEpochSecond() + 30)}));
    for (List<String[]> fields : dialects) {
      try (TestServer server = new TestServer(ticker, req -> {
        TestServer.Reply r = ok();
        fields.forEach(f -> r.header(f[0], f[1]));
        return r;
      })) {
        HeadroomClient client = client(ticker).build();
        client.send(get(server, "/"), BodyHandlers.discarding());
        assertThat(client.budgets().snapshot(get(server, "/"))).as(fields.get(0)[0] + ": " + fields.get(0)[1])
            .singleElement().satisfies(b -> {
              assertThat(b.remaining()).isEqualTo(7);
              assertThat(b.reset()).isEqualTo(Duration.ofSeconds(30));
              assertThat(b.source()).isEqualTo("headers");
            });
      }
    }
  }
}
