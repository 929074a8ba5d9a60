package dev.headroom.checker;

import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.InMemoryStore;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.Ticker;
import dev.headroom.client.TestServer;
import dev.headroom.http.headers.HeaderDialect;
import dev.headroom.http.headers.RateLimitHeaders;
import java.io.IOException;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * A service under check: limits {@code /api/items} with headroom-core (3 per minute), writes its
 * fields with Headroom's emitter in one dialect, publishes a discovery document and refuses with a
 * Graceful Boundaries body. Each {@code with...} breaks one thing on purpose.
 */
final class Service {

  static final String DOCUMENT = "{\"service\":\"Items\",\"description\":\"An item catalogue.\",\"conformance\":\"level-4\","
      + "\"limits\":{\"items\":{\"endpoint\":\"/api/items\",\"method\":\"GET\",\"limits\":[{\"type\":\"ip-rate\","
      + "\"maxRequests\":3,\"windowSeconds\":60,\"description\":\"3 requests per IP per minute.\"}]},"
      + "\"orders\":{\"endpoint\":\"/api/orders\",\"method\":\"POST\",\"limits\":[{\"type\":\"key-rate\","
      + "\"maxRequests\":10,\"windowSeconds\":3600,\"description\":\"10 orders per key per hour.\"}]}}}";

  static final String REFUSAL = "{\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\","
      + "\"title\":\"Quota Exceeded\",\"status\":429,\"error\":\"rate_limit_exceeded\",\"detail\":\"Try again in %d seconds.\","
      + "\"why\":\"Limits keep the catalogue available for everyone.\",\"limit\":\"3 requests per IP per minute\","
      + "\"retryAfterSeconds\":%d,\"violated-policies\":[\"default\"],\"alternativeEndpoint\":\"/api/items/cached\"}";

  static final String NOT_FOUND = "{\"error\":\"not_found\",\"detail\":\"No such resource.\","
      + "\"why\":\"Only published endpoints exist; the list is at /.well-known/limits.\"}";

  private HeaderDialect dialect = HeaderDialect.IETF;
  private boolean discovery = true;
  private String document = DOCUMENT;
  private UnaryOperator<String> refusal = UnaryOperator.identity();
  private UnaryOperator<TestServer.Reply> success = UnaryOperator.identity();
  private TestServer.Handler other = req -> null;

  Service dialect(HeaderDialect d) {
    this.dialect = d;
    return this;
  }

  Service withoutDiscovery() {
    this.discovery = false;
    return this;
  }

  Service document(String json) {
    this.document = json;
    return this;
  }

  /** Rewrites the 429 body. */
  Service refusal(UnaryOperator<String> edit) {
    this.refusal = edit;
    return this;
  }

  /** Rewrites success replies (after the emitter wrote its fields). */
  Service success(UnaryOperator<TestServer.Reply> edit) {
    this.success = edit;
    return this;
  }

  /** Answers other paths (a non-null reply wins over the catalogue's own, discovery included). */
  Service other(TestServer.Handler handler) {
    this.other = handler;
    return this;
  }

  TestServer start(Ticker ticker) throws IOException {
    QuotaPolicy policy = QuotaPolicy.builder("default").quota(3).window(Duration.ofSeconds(60))
        .algorithm(Algorithm.FIXED_WINDOW).build();
    QuotaLimiter limiter = QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build());
    RateLimitHeaders emitter = RateLimitHeaders.builder().dialects(EnumSet.of(dialect)).ticker(ticker)
        .policies(List.of(policy)).build();
    return new TestServer(ticker, req -> {
      TestServer.Reply own = other.handle(req);
      if (own != null) {
        return own;
      }
      switch (req.path()) {
        case "/.well-known/limits":
          if (discovery) {
            return TestServer.Reply.of(200).json(document).header("Cache-Control", "public, s-maxage=3600");
          }
          break;
        case "/api/items": {
          Decision d = limiter.acquire(policy, PartitionKey.of("client"));
          TestServer.Reply r;
          if (d.allowed()) {
            r = TestServer.Reply.of(200).json("{\"items\":[]}");
          } else {
            long s = d.retryAfterSeconds();
            r = TestServer.Reply.of(429).body("application/problem+json", refusal.apply(String.format(REFUSAL, s, s)));
          }
          emitter.write(d, r.status, r::header);
          return d.allowed() ? success.apply(r) : r;
        }
        case "/api/items/cached":
          return TestServer.Reply.of(200).json("{\"items\":[],\"cached\":true}");
        default:
          break;
      }
      return TestServer.Reply.of(404).body("application/problem+json", NOT_FOUND);
    });
  }
}
