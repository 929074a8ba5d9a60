package dev.headroom.client;

import static dev.headroom.client.Scripted.get;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.headroom.ManualTicker;
import dev.headroom.http.RetryAfter;
import java.net.http.HttpResponse.BodyHandlers;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.Supplier;
import java.util.stream.LongStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A property over arbitrary field values in every dialect (draft-09 {@code RateLimit} and
 * {@code RateLimit-Policy}, the -07 Dictionary, the -03 to -06 triple, {@code X-RateLimit-*},
 * Retry-After, Date, Age): each Integer range (zero, small, 2^31, the 15-digit maximum of RFC 9651
 * section 3.3.1, 16 digits, {@code Long.MAX_VALUE}), negative, empty, garbage, epoch times centuries
 * away and HTTP-dates in year 1 or 9999. Whatever a real loopback server sends, the client
 * <ul>
 *   <li>never raises anything but {@link RateLimitedException} (a refusal it gave up on),
 *   <li>never hangs (each case runs in virtual time under {@code assertTimeoutPreemptively}),
 *   <li>never waits longer than its ceilings at once ({@link Ceilings#maxReset()},
 *       {@link Ceilings#maxRetryAfter()}, {@link RetryPolicy#maxWait()}; draft-09 section 8.5.1).
 * </ul>
 * Each case is generated from its seed by {@link java.util.Random}, so a failure names the seed
 * that reproduces it.
 */
class ArbitraryFieldsPropertyTest {

  static final int CASES = 150;

  static LongStream seeds() {
    return LongStream.range(0, CASES);
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void arbitraryFieldsNeverRaiseNeverHangAndEveryWaitIsBounded(long seed) throws Exception {
    Random random = new Random(seed);
    ManualTicker ticker = ManualTicker.atFixedInstant();
    List<Duration> waits = Collections.synchronizedList(new ArrayList<>());
    Scheduler scheduler = delay -> {
      waits.add(delay);
      return Scheduler.advancing(ticker).delay(delay);
    };
    List<Supplier<TestServer.Reply>> replies = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      TestServer.Reply reply = reply(random, ticker.instant());
      replies.add(() -> reply);
    }
    replies.add(Scripted::ok);
    RetryPolicy retry = RetryPolicy.builder().jitter(0).maxAttempts(1 + random.nextInt(4)).build();
    Duration bound = max(Ceilings.DEFAULT_MAX_RESET, Ceilings.DEFAULT_MAX_RETRY_AFTER, retry.maxWait());
    try (TestServer server = new TestServer(ticker, Scripted.script(replies))) {
      HeadroomClient client = HeadroomClient.builder(Scripted.HTTP).ticker(ticker).scheduler(scheduler)
          .pacing(random.nextBoolean() ? Pacing.EVEN : Pacing.BURST).retry(retry).build();
      assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
        List<CompletableFuture<HttpResponse<Void>>> concurrent = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
          concurrent.add(client.sendAsync(get(server, "/api/items"), BodyHandlers.discarding()));
        }
        for (CompletableFuture<HttpResponse<Void>> f : concurrent) {
          outcome(() -> f.get());
        }
        for (int i = 0; i < 3; i++) {
          outcome(() -> client.sendAsync(get(server, "/api/items"), BodyHandlers.discarding()).get());
        }
      }, "seed " + seed);
    }
    assertThat(waits).as("seed %d", seed).allSatisfy(w -> assertThat(w).isLessThanOrEqualTo(bound));
  }

  interface Call {
    HttpResponse<Void> run() throws Exception;
  }

  /** A response, or the refusal the client gave up on; anything else fails the property. */
  private static void outcome(Call call) throws Exception {
    try {
      call.run();
    } catch (ExecutionException e) {
      if (!(e.getCause() instanceof RateLimitedException)) {
        throw e;
      }
    }
  }

  private static Duration max(Duration... ds) {
    Duration m = Duration.ZERO;
    for (Duration d : ds) {
      m = d.compareTo(m) > 0 ? d : m;
    }
    return m;
  }

  // ---- the generator

  static TestServer.Reply reply(Random r, Instant now) {
    int[] statuses = {200, 200, 200, 429, 429, 503, 204};
    TestServer.Reply reply = TestServer.Reply.of(statuses[r.nextInt(statuses.length)]);
    reply.body("text/plain", "x");
    int dialects = 1 + r.nextInt(3);
    for (int i = 0; i < dialects; i++) {
      switch (r.nextInt(5)) {
        case 0 -> ietf(r, reply);
        case 1 -> reply.header("RateLimit", "limit=" + number(r, now) + ", remaining=" + number(r, now) + ", reset="
            + number(r, now)).header("RateLimit-Policy", number(r, now) + ";w=" + number(r, now));
        case 2 -> reply.header("RateLimit-Limit", number(r, now)).header("RateLimit-Remaining", number(r, now))
            .header("RateLimit-Reset", number(r, now)).header("RateLimit-Policy", number(r, now) + ";w=" + number(r, now));
        case 3 -> reply.header("X-RateLimit-Limit", number(r, now)).header("X-RateLimit-Remaining", number(r, now))
            .header("X-RateLimit-Reset", r.nextBoolean() ? number(r, now) : date(r, now));
        default -> { }
      }
    }
    if (r.nextInt(3) > 0) {
      reply.header("Retry-After", r.nextBoolean() ? number(r, now) : date(r, now));
    }
    if (r.nextInt(4) == 0) {
      reply.header("Date", date(r, now));
    }
    if (r.nextInt(8) == 0) {
      reply.header("Age", number(r, now));
    }
    return reply;
  }

  private static void ietf(Random r, TestServer.Reply reply) {
    Instant now = Instant.EPOCH;
    String name = r.nextBoolean() ? "\"default\"" : "\"p" + r.nextInt(3) + "\"";
    String pk = switch (r.nextInt(3)) {
      case 0 -> "";
      case 1 -> ";pk=:AQID:";
      default -> ";pk=:" + garbage(r) + ":";
    };
    if (r.nextBoolean()) {
      reply.header("RateLimit-Policy", name + ";q=" + number(r, now) + ";w=" + number(r, now) + (r.nextBoolean() ? pk : ""));
    }
    reply.header("RateLimit", name + ";r=" + number(r, now) + ";t=" + number(r, now) + (r.nextBoolean() ? pk : ""));
  }

  static String number(Random r, Instant now) {
    return switch (r.nextInt(14)) {
      case 0 -> "0";
      case 1 -> Integer.toString(r.nextInt(10));
      case 2 -> Integer.toString(r.nextInt(100_000));
      case 3 -> Long.toString(1L << 31);
      case 4 -> "999999999999999";
      case 5 -> "99999999999999";
      case 6 -> "9999999999999999";
      case 7 -> Long.toString(Long.MAX_VALUE);
      case 8 -> "-" + r.nextInt(1000);
      case 9 -> "";
      case 10 -> garbage(r);
      case 11 -> Long.toString(now.getEpochSecond() + (r.nextLong() % (300L * 365 * 86_400)));
      case 12 -> Long.toString(now.toEpochMilli() + r.nextInt(1_000_000)) + (r.nextBoolean() ? ".5" : "");
      default -> Long.toString((r.nextLong() >>> 1) % 1_000_000_000_000_000L);
    };
  }

  static String date(Random r, Instant now) {
    return switch (r.nextInt(5)) {
      case 0 -> "Fri, 31 Dec 9999 23:59:59 GMT";
      case 1 -> "Mon, 01 Jan 0001 00:00:00 GMT";
      case 2 -> RetryAfter.formatHttpDate(now.plusSeconds(r.nextInt(7200) - 3600));
      case 3 -> "Sunday, 06-Nov-94 08:49:37 GMT";
      default -> garbage(r);
    };
  }

  static String garbage(Random r) {
    StringBuilder b = new StringBuilder();
    int n = r.nextInt(20);
    for (int i = 0; i < n; i++) {
      b.append((char) (0x21 + r.nextInt(0x5e)));
    }
    return b.toString();
  }
}
