package dev.headroom.client;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.headroom.ManualTicker;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import javax.net.ssl.SSLSession;

/**
 * Hostile answers straight into {@link BudgetTracker}: every header a server can send (RateLimit
 * fields in every dialect, Retry-After, Date, Age) and every vend extension body (seed 003, "Data
 * (Response)"). For each answer a request is in flight and a second one waits behind it; recording
 * the answer must not throw, must wake the waiter (the scope's next request is admitted, in virtual
 * time), and no wait may exceed the ceilings (draft-09 section 8.5.1).
 *
 * <p>An input is text, so that the committed seeds read as what they test: answers separated by an
 * empty line, each a status line ({@code 429}) and then {@code Name: value} lines ({@code fields});
 * for {@code vendData}, the input is the response body. Plain {@code mvn verify} replays the inputs
 * under {@code src/test/resources/dev/headroom/client/BudgetTrackerFuzzTestInputs/<method>/};
 * {@code JAZZER_FUZZ=1} fuzzes (see headroom-client/README.md).
 */
class BudgetTrackerFuzzTest {

  static final HttpRequest REQUEST = HttpRequest.newBuilder(URI.create("http://127.0.0.1:9/api/items")).build();
  static final Duration BOUND = Ceilings.DEFAULT_MAX_RESET.compareTo(Ceilings.DEFAULT_MAX_RETRY_AFTER) > 0
      ? Ceilings.DEFAULT_MAX_RESET : Ceilings.DEFAULT_MAX_RETRY_AFTER;

  @FuzzTest(maxDuration = "30s")
  void fields(byte[] input) {
    Run run = new Run(input.length > 0 && (input[0] & 1) == 1 ? Pacing.EVEN : Pacing.BURST);
    String text = new String(input, StandardCharsets.ISO_8859_1);
    String[] answers = text.split("\n\n", 9);
    for (int i = 0; i < Math.min(answers.length, 8); i++) {
      String[] lines = answers[i].split("\n", 33);
      int status = status(lines[0]);
      // One entry per name whatever its case, as the JDK client hands fields over.
      Map<String, List<String>> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
      for (int j = 1; j < Math.min(lines.length, 33); j++) {
        int colon = lines[j].indexOf(':');
        String name = colon > 0 ? lines[j].substring(0, colon).strip() : "";
        if (!name.isEmpty() && name.chars().allMatch(c -> c < 127 && (Character.isLetterOrDigit(c) || c == '-'))) {
          // The JDK client hands over only fields whose name is a token (RFC 9110 section 5.1).
          headers.computeIfAbsent(name, k -> new ArrayList<>())
              .add(lines[j].substring(colon + 1).strip());
        }
      }
      run.answer(exchange(status, headers, new byte[0], run.ticker));
    }
    run.check();
  }

  @FuzzTest(maxDuration = "30s")
  void vendData(byte[] input) {
    Run run = new Run(Pacing.BURST);
    VendReading reading = VendReading.parse(input, Optional.of("orders.create"));
    for (VendReading.Limit l : reading.limits()) {
      assertThat(l.limit()).isNotNegative();
      assertThat(l.remaining()).isNotNegative();
      assertThat(l.resetsIn().isNegative()).isFalse();
    }
    reading.retryAfter().ifPresent(d -> assertThat(d.isNegative()).isFalse());
    for (int i = 0; i < 3; i++) {
      run.answer(exchange(200, Map.of(), input, run.ticker).withVend(reading));
    }
    run.check();
  }

  /** One tracker in virtual time, its waits recorded. */
  static final class Run {
    final ManualTicker ticker = ManualTicker.atFixedInstant();
    final List<Duration> waits = new ArrayList<>();
    final BudgetTracker tracker;

    Run(Pacing pacing) {
      Scheduler scheduler = delay -> {
        waits.add(delay);
        return Scheduler.advancing(ticker).delay(delay);
      };
      tracker = new BudgetTracker(ticker, scheduler, pacing, Ceilings.defaults(), r -> "scope",
          VendClientOptions.defaults(), RetryPolicy.defaults());
    }

    void answer(Exchange exchange) {
      // The first states a cost in tokens, so that budgets in other units (qu) are fuzzed too.
      CompletableFuture<BudgetTracker.Permit> first = tracker.acquire(REQUEST, Set.of(VendCall.ALL_CALLS),
          RequestCost.of("tokens", 300));
      assertThat(first).as("admitted in virtual time").isDone();
      CompletableFuture<BudgetTracker.Permit> second = tracker.acquire(REQUEST, Set.of(VendCall.ALL_CALLS),
          RequestCost.none());
      tracker.record(first.join(), exchange);
      assertThat(second).as("woken by the answer to the request it waited for").isDone();
      tracker.record(second.join(), exchange);
    }

    void check() {
      assertThat(waits).allSatisfy(w -> assertThat(w).isLessThanOrEqualTo(BOUND));
    }
  }

  private static int status(String line) {
    String s = line.strip();
    if (s.length() == 3 && s.chars().allMatch(c -> c >= '0' && c <= '9') && s.charAt(0) >= '1') {
      return Integer.parseInt(s);
    }
    return 200;
  }

  static Exchange exchange(int status, Map<String, List<String>> headers, byte[] body, ManualTicker ticker) {
    HttpHeaders h = HttpHeaders.of(headers, (a, b) -> true);
    Object content = status == 429 || status == 503 ? new RefusalBody(body, false) : body;
    return Exchange.of(REQUEST, new Response(status, h, content), ticker.instant());
  }

  /** An answer as the JDK client would hand it over. */
  private record Response(int statusCode, HttpHeaders headers, Object body) implements HttpResponse<Object> {
    @Override
    public HttpRequest request() {
      return REQUEST;
    }

    @Override
    public Optional<HttpResponse<Object>> previousResponse() {
      return Optional.empty();
    }

    @Override
    public Optional<SSLSession> sslSession() {
      return Optional.empty();
    }

    @Override
    public URI uri() {
      return REQUEST.uri();
    }

    @Override
    public HttpClient.Version version() {
      return HttpClient.Version.HTTP_1_1;
    }
  }
}
