package dev.headroom.client;

import static dev.headroom.client.Scripted.get;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.ManualTicker;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;

/**
 * Graceful Boundaries section 1: "an agent that receives a 429 with an unfamiliar {@code limit}
 * value SHOULD re-fetch the discovery endpoint, as limits may have changed". A refusal whose
 * {@code limitId} or {@code limit} the client's document does not describe makes it read
 * {@code /.well-known/limits} again, once per unfamiliar limit and at most once per
 * {@link HeadroomClient#UNFAMILIAR_LIMIT_REFETCH_INTERVAL}, so a hostile server cannot make it read
 * the document on every request. Loopback server, virtual time.
 */
class DiscoveryRefetchTest {

  static final String DOCUMENT = "{\"service\":\"Items\",\"limits\":{\"items\":{\"endpoint\":\"/api/items\",\"method\":\"GET\","
      + "\"limits\":[{\"type\":\"ip-rate\",\"limitId\":\"items-ip\",\"maxRequests\":100,\"windowSeconds\":60,"
      + "\"description\":\"100 requests per IP per minute.\"}]}}}";

  private final ManualTicker ticker = ManualTicker.atFixedInstant();

  private static TestServer.Reply refusal(String limitId, String limit) {
    return TestServer.Reply.of(429).header("Retry-After", "1").body("application/problem+json",
        "{\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\",\"title\":\"Quota Exceeded\","
            + "\"status\":429,\"error\":\"rate_limit_exceeded\",\"detail\":\"Try again in 1 second.\","
            + "\"why\":\"Limits keep the service available.\",\"limit\":\"" + limit + "\",\"retryAfterSeconds\":1"
            + (limitId == null ? "" : ",\"limitId\":\"" + limitId + "\"") + "}");
  }

  /** Reads of the document after {@code refusals} refused requests, {@code pause} apart. */
  private long reads(IntFunction<TestServer.Reply> refusals, int requests, Duration pause) throws Exception {
    AtomicInteger n = new AtomicInteger();
    try (TestServer server = new TestServer(ticker, req -> req.path().equals("/.well-known/limits")
        ? TestServer.Reply.of(200).json(DOCUMENT) : refusals.apply(n.getAndIncrement()))) {
      HeadroomClient client = Scripted.client(ticker).retry(RetryPolicy.none()).discoverLimits(true).build();
      for (int i = 0; i < requests; i++) {
        ticker.advance(pause);
        assertThatThrownBy(() -> client.send(get(server, "/api/items"), BodyHandlers.discarding()))
            .isInstanceOf(RateLimitedException.class);
        // A read the refusal started, if any, is done before the next request.
        client.discoverAsync(server.uri("/")).get();
      }
      return server.log().stream().filter(l -> l.request().path().equals("/.well-known/limits")).count();
    }
  }

  @Test
  void aRefusalOfALimitTheDocumentDescribesByIdReadsNothingMore() throws Exception {
    assertThat(reads(i -> refusal("items-ip", "something else"), 3, Duration.ofMinutes(2))).isEqualTo(1);
  }

  @Test
  void aRefusalOfALimitTheDocumentDescribesInWordsReadsNothingMore() throws Exception {
    assertThat(reads(i -> refusal(null, "100 Requests per IP  per minute"), 3, Duration.ofMinutes(2))).isEqualTo(1);
  }

  @Test
  void anUnfamiliarLimitReadsTheDocumentAgainOnce() throws Exception {
    // Three refusals of one limit the document does not know: one more read, not three.
    assertThat(reads(i -> refusal("items-key", "10 requests per key per minute"), 3, Duration.ofMinutes(2)))
        .isEqualTo(2);
  }

  @Test
  void aServerNamingANewLimitInEveryRefusalGetsAtMostOneReadPerInterval() throws Exception {
    // Ten new limits, one every 11 s (10 s apart, 1 s held by Retry-After): none read within a minute
    // of the first read, then one, then none within a minute of that.
    assertThat(reads(i -> refusal("limit-" + i, "limit " + i), 10, Duration.ofSeconds(10))).isEqualTo(1 + 1);
  }

  @Test
  void andOneMoreAfterEachInterval() throws Exception {
    // Twenty refusals 15 s apart (5 minutes, plus 1 s held by each Retry-After): one read per minute at most.
    long reads = reads(i -> refusal("limit-" + i, "limit " + i), 20, Duration.ofSeconds(15));
    assertThat(reads).isBetween(2L, 1L + 5);
  }
}
