package dev.headroom.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.enforcement.partition.PartitionKeyDerivation;
import dev.headroom.enforcement.partition.RequestView;
import dev.headroom.http.body.ProblemType;
import dev.headroom.http.body.RefusalFormat;
import dev.headroom.http.headers.HeaderDialect;
import dev.headroom.http.headers.RateLimitFields;
import dev.headroom.http.headers.ServiceLimitItem;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The first half of {@link HttpAdapterSpec}, which adapters extend (never this class directly): the
 * server's lifecycle and the hooks an adapter implements, the request helpers, and the behaviour
 * every Headroom server adapter shows, checked over a real socket with
 * {@link java.net.http.HttpClient}: RateLimit headers in each dialect, Retry-After, the combined
 * RFC 9457 / Graceful Boundaries refusal in JSON and HTML, the discovery document with its ETag,
 * concurrency leases released when a response completes (synchronous and asynchronous), content
 * bytes charged after the fact (only those kept and sent: not HEAD, not reset), and fields that
 * follow the status the application chose (none on its redirects, draft-09 section 6).
 *
 * <p>An adapter's test extends this class: {@link #start(SpecFixture)} configures the adapter from
 * the fixture (its routes, limiter, refusal texts and a user callback reading
 * {@link SpecFixture#USER_HEADER}), serves the {@link SpecEndpoint}s, listens on a loopback port
 * and returns the base URI; {@link #stop()} shuts it down. One server serves the whole class; each
 * test works in partitions (API keys) of its own.
 *
 * <p>Sections cited: draft-ietf-httpapi-ratelimit-headers-09 (draft-09), Graceful Boundaries 1.5
 * (GB), RFC 9457, RFC 9110.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class HttpAdapterSpecCore {

  /**
   * Longest any single exchange may take: generous, because the machines these run on are shared
   * (a load average of 40 on 2 cores has held one loopback exchange up for over 10 s).
   */
  protected static final Duration TIMEOUT = Duration.ofSeconds(30);

  static final ObjectMapper JSON = new ObjectMapper();

  protected SpecFixture fixture;
  protected URI base;
  protected HttpClient client;
  String key;

  /**
   * Starts the adapter under test, configured from the fixture, on a loopback port.
   *
   * @return the base URI, such as {@code http://127.0.0.1:54321}, without a trailing slash
   */
  protected abstract URI start(SpecFixture fixture) throws Exception;

  /** Stops what {@link #start(SpecFixture)} started. */
  protected abstract void stop() throws Exception;

  /**
   * Lowers (or, with 1, restores) a policy's capacity at run time through the adapter's own
   * interface: the gateway's admin {@code POST /capacity}, the filter's {@code reduceCapacity}.
   */
  protected abstract void reduceCapacity(String policy, double factor) throws Exception;

  /**
   * Why this front end serves no vend route (the vend rate-limit extension, seed 003), for an
   * adapter that cannot: the vend test then aborts with this reason, reported, never skipped
   * silently. Empty, the default, for an adapter that serves {@link SpecFixture#VEND_PATH} as a
   * vend route whose {@code function} scope is {@link SpecFixture#VEND_POLICY} (every adapter
   * does today: the gateway, the filter on three containers, the starter).
   */
  protected Optional<String> vendRoutesUnsupported() {
    return Optional.empty();
  }

  /**
   * The Graceful Boundaries {@code scope} a refusal of the {@code per-user} policy reports. An
   * adapter inside the application partitions by the user its host authenticated: {@code user}
   * (the default). An adapter outside it (the gateway) knows no authenticated user and partitions by
   * the request header that names one, {@link SpecFixture#USER_HEADER}, which is a {@code key}
   * scope; it overrides this to say so.
   */
  protected String userScope() {
    return "user";
  }

  /**
   * The HTTP version the specification's client speaks: HTTP/1.1 unless a front end that also speaks
   * HTTP/2 runs the specification over it too ({@code HTTP_2} on an {@code http://} base: the JDK
   * client's {@code Upgrade: h2c}, then streams on the upgraded connection).
   */
  protected HttpClient.Version httpVersion() {
    return HttpClient.Version.HTTP_1_1;
  }

  @BeforeAll
  void startServer() throws Exception {
    fixture = new SpecFixture();
    base = start(fixture);
    client = HttpClient.newBuilder().version(httpVersion()).connectTimeout(TIMEOUT).build();
  }

  @AfterAll
  void stopServer() throws Exception {
    fixture.hold().open();
    stop();
  }

  @BeforeEach
  void freshPartition() {
    key = "k-" + UUID.randomUUID();
  }

  /** The partition this test's API key is counted in (hashed, never the raw key). */
  String partition() {
    return PartitionKeyDerivation.apiKey().derive(RequestView.builder().header("X-Api-Key", key).build()).value();
  }

  // ---- requests

  protected HttpResponse<String> get(String path, String... headers) throws IOException, InterruptedException {
    return send("GET", path, headers);
  }

  protected HttpResponse<String> send(String method, String path, String... headers) throws IOException, InterruptedException {
    return client.send(request(method, path, headers), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
  }

  HttpRequest request(String method, String path, String... headers) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(TIMEOUT)
        .method(method, method.equals("POST") ? HttpRequest.BodyPublishers.ofString("{}") : HttpRequest.BodyPublishers.noBody())
        .header("X-Api-Key", key);
    for (int i = 0; i + 1 < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return b.build();
  }

  CompletableFuture<HttpResponse<String>> sendAsync(String path) {
    return client.sendAsync(request("GET", path), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
  }

  static String header(HttpResponse<?> r, String name) {
    return r.headers().firstValue(name).orElse(null);
  }

  RateLimitFields fields(HttpResponse<?> r) {
    return RateLimitFields.parse(r.headers(), fixture.ticker().instant());
  }

  static ServiceLimitItem limit(RateLimitFields f, String policy) {
    return f.limits().stream().filter(l -> l.name().equals(Optional.of(policy))).findFirst()
        .orElseThrow(() -> new AssertionError("no RateLimit item for policy '" + policy + "' in " + f));
  }

  static JsonNode json(HttpResponse<String> r) throws IOException {
    return JSON.readTree(r.body());
  }

  HttpResponse<String> exhaust(String path, int quota, String... headers) throws Exception {
    for (int i = 0; i < quota; i++) {
      assertThat(get(path, headers).statusCode()).as("request %d of %d", i + 1, quota).isEqualTo(200);
    }
    return get(path, headers);
  }

  // ---- draft-09 sections 3 and 4: the fields on success

  @Test
  void allowedResponseCarriesPolicyAndServiceLimit_draft09_sections3and4() throws Exception {
    HttpResponse<String> r = get("/spec/items/1");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("ok");
    assertThat(header(r, "RateLimit-Policy")).isEqualTo("\"items\";q=3;w=60");
    assertThat(header(r, "RateLimit")).isEqualTo("\"items\";r=2;t=60");
    assertThat(header(r, "Retry-After")).isNull();
    assertThat(fields(r).diagnostics()).isEmpty();
  }

  @Test
  void remainingCountsDownAcrossRequestsOfOnePartition_draft09_section4() throws Exception {
    assertThat(limit(fields(get("/spec/items/1")), "items").remaining().getAsLong()).isEqualTo(2);
    assertThat(limit(fields(get("/spec/items/2")), "items").remaining().getAsLong()).isEqualTo(1);
    assertThat(limit(fields(get("/spec/items/3")), "items").remaining().getAsLong()).isEqualTo(0);
  }

  @Test
  void unmatchedRoutesAreNotLimitedAndCarryNoFields() throws Exception {
    for (int i = 0; i < 5; i++) {
      HttpResponse<String> r = get("/spec/free");
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(header(r, "RateLimit")).isNull();
      assertThat(header(r, "RateLimit-Policy")).isNull();
    }
  }

  @Test
  void clientAddressPartitionsCountTheLoopbackPeer() throws Exception {
    HttpResponse<String> first = get("/spec/ip");
    assertThat(first.statusCode()).isEqualTo(200);
    assertThat(header(first, "RateLimit")).startsWith("\"per-ip\";r=");
  }

  // ---- refusals: draft-09 section 6, GB section 2, RFC 9457

  @Test
  void refusalIs429WithRetryAfterEqualToTheViolatedPolicysReset_draft09_section6() throws Exception {
    HttpResponse<String> r = exhaust("/spec/items/1", 3);
    assertThat(r.statusCode()).isEqualTo(429);
    assertThat(header(r, "Retry-After")).isEqualTo("60");
    assertThat(header(r, "RateLimit")).isEqualTo("\"items\";r=0;t=60");
    assertThat(header(r, "RateLimit-Policy")).isEqualTo("\"items\";q=3;w=60");
  }

  @Test
  void refusalBodyIsProblemDetailsAndAGracefulBoundariesRefusal_rfc9457_gb_section2() throws Exception {
    HttpResponse<String> r = exhaust("/spec/items/1", 3);
    assertThat(header(r, "Content-Type")).startsWith("application/problem+json");
    JsonNode b = json(r);
    assertThat(b.path("type").asText()).isEqualTo(ProblemType.QUOTA_EXCEEDED.uri());
    assertThat(b.path("title").asText()).isEqualTo(ProblemType.QUOTA_EXCEEDED.title());
    assertThat(b.path("status").asInt()).isEqualTo(429);
    assertThat(b.path("error").asText()).matches("[a-z0-9_]+");
    assertThat(b.path("detail").asText()).contains("60 seconds");
    assertThat(b.path("why").asText()).isEqualTo(SpecFixture.WHY);
    assertThat(b.path("limit").asText()).contains("3").contains("request");
    assertThat(b.path("retryAfterSeconds").isIntegralNumber()).isTrue();
    assertThat(b.path("retryAfterSeconds").asLong()).isEqualTo(Long.parseLong(header(r, "Retry-After")));
    assertThat(b.path("violated-policies")).hasSize(1);
    assertThat(b.path("violated-policies").get(0).asText()).isEqualTo("items");
    assertThat(b.path("limitId").asText()).isEqualTo("items");
    assertThat(b.path("scope").asText()).isEqualTo("key");
  }

  @Test
  void refusalsAreNeverCachedAndVaryByAccept_gb_sc7_rfc9111() throws Exception {
    HttpResponse<String> r = exhaust("/spec/items/1", 3);
    // the second refusal of the same numbers in the same second too (a front end may reuse a body)
    for (HttpResponse<String> refused : List.of(r, get("/spec/items/1"))) {
      assertThat(refused.statusCode()).isEqualTo(429);
      assertThat(header(refused, "Cache-Control")).isEqualTo(RefusalFormat.CACHE_CONTROL);
      assertThat(varies(refused)).contains("accept");
    }
  }

  /** The field names a response's {@code Vary} fields list, lower case. */
  static List<String> varies(HttpResponse<?> r) {
    return r.headers().allValues("Vary").stream().flatMap(v -> Arrays.stream(v.split(",")))
        .map(v -> v.strip().toLowerCase(Locale.ROOT)).toList();
  }

  @Test
  void refusalAsApplicationJsonWhenOnlyJsonIsAccepted_gb_section2() throws Exception {
    HttpResponse<String> r = exhaust("/spec/items/1", 3, "Accept", "application/json");
    assertThat(r.statusCode()).isEqualTo(429);
    assertThat(header(r, "Content-Type")).startsWith("application/json");
    assertThat(json(r).path("retryAfterSeconds").asLong()).isEqualTo(60);
  }

  @Test
  void browsersGetAnHtmlRefusalWithMetaRetryAfter_gb_section2_html429() throws Exception {
    String accept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
    HttpResponse<String> r = exhaust("/spec/items/1", 3, "Accept", accept);
    assertThat(r.statusCode()).isEqualTo(429);
    assertThat(header(r, "Content-Type")).startsWith("text/html");
    assertThat(header(r, "Retry-After")).isEqualTo("60");
    assertThat(r.body()).contains("<meta name=\"retry-after\" content=\"60\">")
        .contains("<link rel=\"alternate\" type=\"application/json\"")
        .contains(SpecFixture.WHY);
  }

  @Test
  void theWindowResetsWhenTheClockAdvances() throws Exception {
    assertThat(exhaust("/spec/items/1", 3).statusCode()).isEqualTo(429);
    fixture.ticker().advance(SpecFixture.WINDOW);
    HttpResponse<String> r = get("/spec/items/1");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(header(r, "RateLimit")).isEqualTo("\"items\";r=2;t=60");
  }

  /**
   * A refused request's unread body does not cost its connection silently: the next request on
   * the same connection is answered (RFC 9112 section 9.6: a server that will close says so).
   */
  @Test
  void aRefusedRequestWithABodyLeavesItsConnectionUsable_rfc9112_section9_6() throws Exception {
    assertThat(send("POST", "/spec/multi").statusCode()).isEqualTo(200);
    assertThat(send("POST", "/spec/multi").statusCode()).isEqualTo(200);
    try (Socket s = new Socket(base.getHost(), base.getPort())) {
      s.setSoTimeout((int) TIMEOUT.toMillis());
      OutputStream out = s.getOutputStream();
      InputStream in = new BufferedInputStream(s.getInputStream());
      String body = "{\"pad\":\"" + "x".repeat(2000) + "\"}";
      String head = "POST " + base.getPath() + "/spec/multi HTTP/1.1\r\nHost: " + base.getHost() + "\r\nX-Api-Key: " + key
          + "\r\nContent-Type: application/json\r\nContent-Length: " + body.length() + "\r\n\r\n";
      String post = head + body;
      // the body follows the head a moment later, as clients that write them apart send it: a
      // server that answers before it arrives must still read it, or say it will close
      out.write(head.getBytes(StandardCharsets.US_ASCII));
      out.flush();
      TimeUnit.MILLISECONDS.sleep(150);
      out.write(body.getBytes(StandardCharsets.US_ASCII));
      out.flush();
      RawResponse first = RawResponse.read(in);
      assertThat(first.status()).isEqualTo(429);
      if (first.closes()) {
        assertThat(in.read()).as("a connection announced as closing is closed").isEqualTo(-1);
        return;
      }
      out.write(post.getBytes(StandardCharsets.US_ASCII));
      out.flush();
      assertThat(RawResponse.read(in).status()).as("the next request on the same connection").isEqualTo(429);
    }
  }

  /** A response read off a raw connection: the status, whether it closes, its body skipped. */
  private record RawResponse(int status, boolean closes) {
    static RawResponse read(InputStream in) throws IOException {
      String statusLine = line(in);
      if (statusLine == null) {
        throw new IOException("the connection closed before a response");
      }
      int status = Integer.parseInt(statusLine.split(" ")[1]);
      long length = 0;
      boolean chunked = false;
      boolean closes = false;
      String field;
      while ((field = line(in)) != null && !field.isEmpty()) {
        String name = field.substring(0, field.indexOf(':')).trim().toLowerCase(Locale.ROOT);
        String value = field.substring(field.indexOf(':') + 1).trim();
        switch (name) {
          case "content-length" -> length = Long.parseLong(value);
          case "transfer-encoding" -> chunked = value.toLowerCase(Locale.ROOT).endsWith("chunked");
          case "connection" -> closes = value.toLowerCase(Locale.ROOT).contains("close");
          default -> { }
        }
      }
      if (chunked) {
        long size;
        while ((size = Long.parseLong(line(in).split(";")[0].trim(), 16)) > 0) {
          in.readNBytes((int) size + 2);
        }
        while (!line(in).isEmpty()) {
          // trailer fields
        }
      } else {
        in.readNBytes((int) length);
      }
      return new RawResponse(status, closes);
    }

    private static String line(InputStream in) throws IOException {
      StringBuilder sb = new StringBuilder();
      int c;
      while ((c = in.read()) >= 0 && c != '\n') {
        if (c != '\r') {
          sb.append((char) c);
        }
      }
      return c < 0 && sb.length() == 0 ? null : sb.toString();
    }
  }

  @Test
  void allOrNothingARefusalConsumesNoOtherPolicy_draft09_section5() throws Exception {
    assertThat(send("POST", "/spec/multi").statusCode()).isEqualTo(200);
    assertThat(send("POST", "/spec/multi").statusCode()).isEqualTo(200);
    HttpResponse<String> refused = send("POST", "/spec/multi");
    assertThat(refused.statusCode()).isEqualTo(429);
    assertThat(header(refused, "RateLimit-Policy")).isEqualTo("\"multi-wide\";q=5;w=60, \"multi-narrow\";q=2;w=60");
    assertThat(header(refused, "RateLimit")).isEqualTo("\"multi-wide\";r=3;t=60, \"multi-narrow\";r=0;t=60");
    assertThat(json(refused).path("violated-policies").get(0).asText()).isEqualTo("multi-narrow");
    // x-ratelimit reports the most constraining policy.
    assertThat(header(refused, "X-RateLimit-Limit")).isEqualTo("2");
    assertThat(header(refused, "X-RateLimit-Remaining")).isEqualTo("0");
    assertThat(header(refused, "X-RateLimit-Reset")).isEqualTo("60");
    assertThat(header(send("POST", "/spec/multi"), "RateLimit")).isEqualTo("\"multi-wide\";r=3;t=60, \"multi-narrow\";r=0;t=60");
  }

  // ---- every dialect (headroom-http HeaderDialect)

  @ParameterizedTest
  @EnumSource(HeaderDialect.class)
  void eachDialectWritesItsOwnFieldsAndNoOthers(HeaderDialect d) throws Exception {
    String path = "/spec/dialect/" + d.token();
    String policy = "d-" + d.token();
    HttpResponse<String> ok = get(path);
    assertThat(ok.statusCode()).isEqualTo(200);
    for (String name : List.of("RateLimit", "RateLimit-Policy", "RateLimit-Limit", "RateLimit-Remaining",
        "RateLimit-Reset", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset")) {
      assertThat(header(ok, name) != null).as("%s in dialect %s", name, d).isEqualTo(d.fieldNames().contains(name));
    }
    switch (d) {
      case IETF: case DRAFT_09:
        // A fixed window: t is the same in both meanings (until the reset, until more quota).
        assertThat(header(ok, "RateLimit-Policy")).isEqualTo("\"" + policy + "\";q=2;w=60");
        assertThat(header(ok, "RateLimit")).isEqualTo("\"" + policy + "\";r=1;t=60");
        break;
      case IETF_NEXT:
        assertThat(header(ok, "RateLimit-Policy")).isEqualTo("\"" + policy + "\";q=2;w=60");
        assertThat(header(ok, "RateLimit")).isEqualTo("\"" + policy + "\";a=1;w=60");
        assertThat(header(ok, "RateLimit-Partition")).isEqualTo("\"" + policy + "\";client_id");
        break;
      case DRAFT_07:
        assertThat(header(ok, "RateLimit")).isEqualTo("limit=2, remaining=1, reset=60");
        assertThat(header(ok, "RateLimit-Policy")).isEqualTo("2;w=60");
        break;
      case DRAFT_06:
        assertThat(header(ok, "RateLimit-Limit")).isEqualTo("2");
        assertThat(header(ok, "RateLimit-Remaining")).isEqualTo("1");
        assertThat(header(ok, "RateLimit-Reset")).isEqualTo("60");
        assertThat(header(ok, "RateLimit-Policy")).isEqualTo("2;w=60");
        break;
      case DRAFT_03:
        assertThat(header(ok, "RateLimit-Limit")).isEqualTo("2, 2;w=60");
        assertThat(header(ok, "RateLimit-Remaining")).isEqualTo("1");
        assertThat(header(ok, "RateLimit-Reset")).isEqualTo("60");
        break;
      case X_RATELIMIT:
        assertThat(header(ok, "X-RateLimit-Limit")).isEqualTo("2");
        assertThat(header(ok, "X-RateLimit-Remaining")).isEqualTo("1");
        assertThat(header(ok, "X-RateLimit-Reset")).isEqualTo("60");
        break;
      default:
        throw new AssertionError(d);
    }
    RateLimitFields parsed = fields(ok);
    // draft-09 and draft-10/-11 write the same fields: a reader reports both as ietf.
    assertThat(parsed.dialects()).contains(d == HeaderDialect.DRAFT_09 ? HeaderDialect.IETF : d);
    assertThat(parsed.diagnostics()).isEmpty();
    get(path);
    HttpResponse<String> refused = get(path);
    assertThat(refused.statusCode()).isEqualTo(429);
    assertThat(header(refused, "Retry-After")).isEqualTo("60");
    assertThat(fields(refused).limits()).isNotEmpty();
    assertThat(fields(refused).limits().get(0).remaining().getAsLong()).isZero();
  }

  // ---- partitions the host supplies

  @Test
  void userPartitionsComeFromTheHostApplication() throws Exception {
    String alice = "alice-" + UUID.randomUUID();
    String bob = "bob-" + UUID.randomUUID();
    HttpResponse<String> refused = exhaust("/spec/me", 2, SpecFixture.USER_HEADER, alice);
    assertThat(refused.statusCode()).isEqualTo(429);
    assertThat(json(refused).path("scope").asText()).isEqualTo(userScope());
    assertThat(get("/spec/me", SpecFixture.USER_HEADER, bob).statusCode()).isEqualTo(200);
  }

  // ---- concurrent-requests: the lease ends with the response (ARCHITECTURE.md, request step 7)

  @Test
  void concurrencyLeaseIsReleasedWhenASynchronousResponseCompletes() throws Exception {
    leaseIsReleasedWhenTheResponseCompletes("/spec/slow", "slots");
  }

  @Test
  void concurrencyLeaseIsReleasedWhenAnAsynchronousResponseCompletes() throws Exception {
    leaseIsReleasedWhenTheResponseCompletes("/spec/slow-async", "async-slots");
  }

  void leaseIsReleasedWhenTheResponseCompletes(String path, String policy) throws Exception {
    CompletableFuture<HttpResponse<String>> held = sendAsync(path);
    fixture.hold().awaitEntered(1);
    HttpResponse<String> refused = get(path);
    assertThat(refused.statusCode()).isEqualTo(429);
    assertThat(header(refused, "RateLimit-Policy")).isEqualTo("\"" + policy + "\";q=1;qu=\"concurrent-requests\";w=60");
    assertThat(json(refused).path("violated-policies").get(0).asText()).isEqualTo(policy);
    fixture.hold().open();
    HttpResponse<String> done = held.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    assertThat(done.statusCode()).isEqualTo(200);
    assertThat(done.body()).isEqualTo("done");
    // Written when the response was committed, on whichever thread wrote it.
    assertThat(header(done, "RateLimit")).startsWith("\"" + policy + "\";r=0;t=");
    fixture.store().await("release", policy, partition(), TIMEOUT);
    CompletableFuture<HttpResponse<String>> again = sendAsync(path);
    fixture.hold().awaitEntered(1);
    fixture.hold().open();
    assertThat(again.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).statusCode()).isEqualTo(200);
    fixture.store().await("release", policy, partition(), TIMEOUT);
  }

  // ---- content-bytes: charged after the fact, as actually written (ARCHITECTURE.md, request step 7)

  @Test
  void contentBytesWrittenThroughTheOutputStreamAreChargedAfterTheFact() throws Exception {
    contentBytesAreCharged("");
  }

  @Test
  void contentBytesWrittenThroughTheWriterAreChargedAfterTheFact() throws Exception {
    contentBytesAreCharged("&writer=true");
  }

  void contentBytesAreCharged(String query) throws Exception {
    HttpResponse<String> first = get("/spec/bytes?n=80" + query);
    assertThat(first.statusCode()).isEqualTo(200);
    assertThat(first.body()).hasSize(80);
    assertThat(header(first, "RateLimit")).isEqualTo("\"bytes\";r=100;t=60");
    assertThat(header(first, "RateLimit-Policy")).isEqualTo("\"bytes\";q=100;qu=\"content-bytes\";w=60");
    assertThat(fixture.store().await("charge", "bytes", partition(), TIMEOUT).units()).isEqualTo(80);
    HttpResponse<String> second = get("/spec/bytes?n=80" + query);
    assertThat(second.statusCode()).isEqualTo(200);
    assertThat(header(second, "RateLimit")).isEqualTo("\"bytes\";r=20;t=60");
    assertThat(fixture.store().await("charge", "bytes", partition(), TIMEOUT).units()).isEqualTo(80);
    // 160 of 100 bytes sent: the partition is in debt until the window ends.
    HttpResponse<String> refused = get("/spec/bytes?n=1" + query);
    assertThat(refused.statusCode()).isEqualTo(429);
    assertThat(Long.parseLong(header(refused, "Retry-After"))).isPositive();
    assertThat(json(refused).path("violated-policies").get(0).asText()).isEqualTo("bytes");
  }

  @Test
  void headTransfersNoContentSoNoContentBytesAreCharged_rfc9110_section9_3_2() throws Exception {
    HttpResponse<String> head = send("HEAD", "/spec/bytes?n=30");
    assertThat(head.statusCode()).isEqualTo(200);
    assertThat(head.body()).isEmpty();
    assertThat(header(head, "RateLimit")).isEqualTo("\"bytes\";r=100;t=60");
    // The HEAD request completed before its response was sent; had it charged 30 bytes, this
    // response would say r=70 and the first charge recorded would be 30.
    HttpResponse<String> get = get("/spec/bytes?n=80");
    assertThat(header(get, "RateLimit")).isEqualTo("\"bytes\";r=100;t=60");
    assertThat(fixture.store().await("charge", "bytes", partition(), TIMEOUT).units()).isEqualTo(80);
  }

  @Test
  void bytesDiscardedByResetBufferAreNotCharged() throws Exception {
    bytesDiscardedByAResetAreNotCharged("buffer");
  }

  @Test
  void bytesDiscardedByResetAreNotChargedAndTheFieldsAreWrittenOnce() throws Exception {
    bytesDiscardedByAResetAreNotCharged("all");
  }

  void bytesDiscardedByAResetAreNotCharged(String reset) throws Exception {
    HttpResponse<String> r = get("/spec/bytes?n=30&discard=50&reset=" + reset);
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("x".repeat(30));
    assertThat(r.headers().allValues("RateLimit")).containsExactly("\"bytes\";r=100;t=60");
    assertThat(r.headers().allValues("RateLimit-Policy")).hasSize(1);
    assertThat(fixture.store().await("charge", "bytes", partition(), TIMEOUT).units()).isEqualTo(30);
    assertThat(header(get("/spec/bytes?n=1"), "RateLimit")).isEqualTo("\"bytes\";r=70;t=60");
  }

  // ---- the status the application chose: draft-09 section 6

  @Test
  void redirectsOfTheApplicationCarryNoRateLimitFieldsWhenOmitted_draft09_section6() throws Exception {
    assertThat(SpecFixture.OMIT_ON_REDIRECT).isTrue();
    HttpResponse<String> sent = get("/spec/moved?to=send");
    assertThat(sent.statusCode()).isEqualTo(302);
    assertThat(header(sent, "Location")).endsWith("/spec/free");
    assertThat(header(sent, "RateLimit")).isNull();
    assertThat(header(sent, "RateLimit-Policy")).isNull();
    HttpResponse<String> set = get("/spec/moved?to=status");
    assertThat(set.statusCode()).isEqualTo(303);
    assertThat(header(set, "Location")).endsWith("/spec/free");
    assertThat(header(set, "RateLimit")).isNull();
    assertThat(header(set, "RateLimit-Policy")).isNull();
    // The redirects were counted, only not reported; a 200 of the same route reports them.
    HttpResponse<String> ok = get("/spec/moved");
    assertThat(ok.statusCode()).isEqualTo(200);
    assertThat(ok.body()).isEqualTo("ok");
    assertThat(header(ok, "RateLimit-Policy")).isEqualTo("\"moved\";q=5;w=60");
    assertThat(header(ok, "RateLimit")).isEqualTo("\"moved\";r=2;t=60");
  }

  // ---- discovery: GB section 1

  @Test
  void discoveryDocumentListsEveryLimitedRoute_gb_section1() throws Exception {
    HttpResponse<String> r = get("/.well-known/limits");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(header(r, "Content-Type")).startsWith("application/json");
    assertThat(header(r, "ETag")).matches("\"[A-Za-z0-9_-]+\"");
    assertThat(header(r, "Cache-Control")).contains("s-maxage=");
    JsonNode doc = json(r);
    assertThat(doc.path("service").asText()).isEqualTo(SpecFixture.SERVICE);
    assertThat(doc.path("description").asText()).isEqualTo(SpecFixture.DESCRIPTION);
    assertThat(doc.path("conformance").asText()).startsWith("level-");
    JsonNode items = doc.path("limits").path("GET /spec/items/{id}");
    assertThat(items.path("endpoint").asText()).isEqualTo("/spec/items/{id}");
    assertThat(items.path("method").asText()).isEqualTo("GET");
    JsonNode l = items.path("limits").get(0);
    assertThat(l.path("type").asText()).isEqualTo("key-rate");
    assertThat(l.path("limitId").asText()).isEqualTo("items");
    assertThat(l.path("maxRequests").asLong()).isEqualTo(3);
    assertThat(l.path("windowSeconds").asLong()).isEqualTo(60);
    assertThat(doc.path("limits").path("POST /spec/multi").path("limits")).hasSize(2);
    assertThat(doc.path("limits").path("GET /spec/bytes").path("limits").get(0).path("costMetric").asText()).isEqualTo("bytes");
    assertThat(doc.path("limits").has("GET /spec/free")).isFalse();
  }

  @Test
  void discoveryIsServedAtBothConventionalPathsWithOneEntityTag_gb_section1() throws Exception {
    HttpResponse<String> wellKnown = get("/.well-known/limits");
    HttpResponse<String> api = get("/api/limits");
    assertThat(api.statusCode()).isEqualTo(200);
    assertThat(api.body()).isEqualTo(wellKnown.body());
    assertThat(header(api, "ETag")).isEqualTo(header(wellKnown, "ETag"));
  }

  @Test
  void discoveryAnswersAConditionalGetWith304_rfc9110_section13_1_2() throws Exception {
    String etag = header(get("/.well-known/limits"), "ETag");
    HttpResponse<String> notModified = get("/.well-known/limits", "If-None-Match", etag);
    assertThat(notModified.statusCode()).isEqualTo(304);
    assertThat(notModified.body()).isEmpty();
    assertThat(header(notModified, "ETag")).isEqualTo(etag);
    HttpResponse<String> changed = get("/api/limits", "If-None-Match", "\"something-else\"");
    assertThat(changed.statusCode()).isEqualTo(200);
    assertThat(changed.body()).isNotEmpty();
  }

  @Test
  void discoveryIsNotRateLimited() throws Exception {
    for (int i = 0; i < 10; i++) {
      assertThat(get("/.well-known/limits").statusCode()).isEqualTo(200);
    }
  }
}
