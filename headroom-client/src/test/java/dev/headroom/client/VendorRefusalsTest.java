package dev.headroom.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.ManualTicker;
import dev.headroom.http.RetryAfter;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Refusals in the forms vendors send them, through {@link HeadroomClient} against a real loopback
 * server: GitHub refuses with 403 as well as 429 ("Rate limits for the REST API": "you will receive
 * a 403 or 429 response, and the x-ratelimit-remaining header will be 0"; a secondary limit's
 * response carries retry-after), and Discord's 429 body says the wait to the millisecond where its
 * Retry-After rounds to seconds (Discord developer documentation, "Rate Limits").
 */
class VendorRefusalsTest {

  private static TestServer.Reply stamped(TestServer.Reply r, ManualTicker ticker) {
    return r.header("Date", RetryAfter.formatHttpDate(ticker.instant()));
  }

  @Test
  void githubsPrimaryLimit403IsARefusalWaitedOutToItsReset() throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    Instant reset = ticker.instant().plusSeconds(30);
    List<Duration> waits = new ArrayList<>();
    try (TestServer server = new TestServer(ticker, Scripted.script(List.of(
        () -> stamped(TestServer.Reply.of(403).json("{\"message\":\"API rate limit exceeded\"}")
            .header("x-ratelimit-limit", "60").header("x-ratelimit-remaining", "0").header("x-ratelimit-used", "60")
            .header("x-ratelimit-reset", Long.toString(reset.getEpochSecond())).header("x-ratelimit-resource", "core"),
            ticker),
        () -> stamped(Scripted.ok().header("x-ratelimit-limit", "60").header("x-ratelimit-remaining", "59")
            .header("x-ratelimit-reset", Long.toString(reset.plusSeconds(3600).getEpochSecond())), ticker))))) {
      HeadroomClient client = Scripted.client(ticker).scheduler(Scripted.recording(ticker, waits)).build();
      assertThat(client.send(Scripted.get(server, "/repos"), BodyHandlers.ofString()).statusCode())
          .as("the 403 was retried after the reset, not handed to the caller").isEqualTo(200);
      assertThat(server.count(403)).isEqualTo(1);
      assertThat(waits.stream().reduce(Duration.ZERO, Duration::plus)).as("waited until the stated reset")
          .isGreaterThanOrEqualTo(Duration.ofSeconds(29));
    }
  }

  @Test
  void githubsSecondaryLimit403WithRetryAfterIsARefusal() throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    List<Duration> waits = new ArrayList<>();
    try (TestServer server = new TestServer(ticker, Scripted.script(List.of(
        () -> stamped(TestServer.Reply.of(403).json("{\"message\":\"You have exceeded a secondary rate limit.\"}")
            .header("retry-after", "7"), ticker),
        () -> stamped(Scripted.ok(), ticker))))) {
      HeadroomClient client = Scripted.client(ticker).scheduler(Scripted.recording(ticker, waits)).build();
      assertThat(client.send(Scripted.get(server, "/search"), BodyHandlers.ofString()).statusCode()).isEqualTo(200);
      assertThat(waits).contains(Duration.ofSeconds(7));
    }
  }

  @Test
  void aPlain403IsThePermissionErrorItSays() throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    try (TestServer server = new TestServer(ticker, Scripted.script(List.of(
        () -> stamped(TestServer.Reply.of(403).json("{\"message\":\"Resource not accessible by integration\"}")
            .header("x-ratelimit-limit", "5000").header("x-ratelimit-remaining", "4999"), ticker))))) {
      HeadroomClient client = Scripted.client(ticker).build();
      assertThat(client.send(Scripted.get(server, "/repos/x/y/hooks"), BodyHandlers.ofString()).statusCode())
          .isEqualTo(403);
      assertThat(server.log()).hasSize(1);
    }
  }

  @Test
  void discordsBodyGivesTheWaitToTheMillisecond() throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    List<Duration> waits = new ArrayList<>();
    try (TestServer server = new TestServer(ticker, Scripted.script(List.of(
        () -> stamped(TestServer.Reply.of(429).json("{\"message\": \"You are being rate limited.\", \"retry_after\": 1.234, \"global\": false}")
            .header("Retry-After", "2").header("X-RateLimit-Limit", "5").header("X-RateLimit-Remaining", "0")
            .header("X-RateLimit-Reset-After", "1.234").header("X-RateLimit-Bucket", "abcd1234")
            .header("X-RateLimit-Scope", "user"), ticker),
        () -> stamped(Scripted.ok().header("X-RateLimit-Limit", "5").header("X-RateLimit-Remaining", "4")
            .header("X-RateLimit-Reset-After", "5.000").header("X-RateLimit-Bucket", "abcd1234"), ticker))))) {
      HeadroomClient client = Scripted.client(ticker).scheduler(Scripted.recording(ticker, waits)).build();
      assertThat(client.send(Scripted.get(server, "/channels/1/messages"), BodyHandlers.ofString()).statusCode())
          .isEqualTo(200);
      assertThat(waits).as("the body's 1.234 s, not the header's rounded 2 s").contains(Duration.ofMillis(1234))
          .doesNotContain(Duration.ofSeconds(2));
    }
  }

  @Test
  void aDiscordBodyThatSaysNothingUsableLeavesRetryAfterStanding() {
    for (String body : List.of("", "not json", "{\"retry_after\": -1}", "{\"retry_after\": \"soon\"}",
        "{\"retry_after\": 1e300}", "[1,2]", "{\"nested\": {\"retry_after\": 3}}", "{\"retry_after\": 99999999999999999999}")) {
      assertThat(Exchange.discordRetryAfter(new RefusalBody(body.getBytes(), false))).as(body).isEmpty();
    }
    assertThat(Exchange.discordRetryAfter(new RefusalBody("{\"global\":true,\"retry_after\":0.5}".getBytes(), false)))
        .contains(Duration.ofMillis(500));
  }
}
