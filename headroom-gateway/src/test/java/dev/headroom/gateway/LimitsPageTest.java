package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.ManualTicker;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The gateway over real sockets (the sample's demo upstream): the limits page it generates at
 * {@code service.humanUrl} (Graceful Boundaries section 3, {@code humanUrl}), the links the sample
 * hands out resolving (CONFORMANCE level 3, "guidance MUST be honest"), and the conformance level
 * its discovery document declares (section 1, {@code conformance}): computed from the
 * configuration, declarable, and an overclaim warned about in one line at load.
 */
class LimitsPageTest {
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final ObjectMapper JSON = new ObjectMapper();

  private static Gateway start(GatewayConfig config) throws Exception {
    return Gateway.builder(config.withListenPort(0).withAdminPort(0)).ticker(ManualTicker.atFixedInstant()).threads(2)
        .watchFile(false).start();
  }

  private static HttpResponse<String> send(Gateway g, String method, String path) throws Exception {
    HttpRequest r = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + g.address().getPort() + path))
        .method(method, HttpRequest.BodyPublishers.noBody()).build();
    return HTTP.send(r, HttpResponse.BodyHandlers.ofString());
  }

  private static String sampleWith(String from, String to) {
    String text = GatewayConfig.sampleText();
    assertThat(text).contains(from);
    return text.replaceFirst(Pattern.quote(from), Matcher.quoteReplacement(to));
  }

  @Test
  void theSampleServesItsLimitsPageAndEveryLinkItHandsOutResolves() throws Exception {
    try (Gateway g = start(GatewayConfig.sample())) {
      HttpResponse<String> page = send(g, "GET", "/docs/limits");
      assertThat(page.statusCode()).isEqualTo(200);
      assertThat(page.headers().firstValue("Content-Type")).contains("text/html; charset=utf-8");
      assertThat(page.body()).contains("<title>Limits of Headroom demo</title>", "<h3>burst</h3>",
          "<dt>Window</dt><dd>5 requests per 10 seconds</dd>", "<dt>Window</dt><dd>1000 requests per 1 day</dd>",
          "<dt>Why</dt><dd>Short bursts are capped so that one caller cannot starve the others.</dd>",
          "<a href=\"/cached/hello\">/cached/hello</a>", "<a href=\"/pricing\">/pricing</a>",
          "<tr><td>GET, POST</td><td><code>/items/{id}</code></td>");
      assertThat(page.body()).doesNotContain("pricing</code>"); // a route without policies limits nothing: not listed

      HttpResponse<String> head = send(g, "HEAD", "/docs/limits");
      assertThat(head.statusCode()).isEqualTo(200);
      assertThat(head.body()).isEmpty();
      HttpResponse<String> post = send(g, "POST", "/docs/limits");
      assertThat(post.statusCode()).isEqualTo(405);
      assertThat(post.headers().firstValue("Allow")).contains("GET, HEAD");
      assertThat(JSON.readTree(post.body()).path("why").asText()).isNotEmpty();

      HttpResponse<String> cached = send(g, "GET", "/cached/hello");
      assertThat(cached.statusCode()).isEqualTo(200);
      assertThat(JSON.readTree(cached.body()).path("cached").asBoolean()).isTrue();
      assertThat(cached.headers().firstValue("RateLimit")).hasValueSatisfying(v -> assertThat(v).startsWith("\"daily\""));
      HttpResponse<String> pricing = send(g, "GET", "/pricing");
      assertThat(pricing.statusCode()).isEqualTo(200);
      assertThat(JSON.readTree(pricing.body()).path("plans").get(0).path("name").asText()).isEqualTo("free");

      String doc = send(g, "GET", "/.well-known/limits").body();
      assertThat(JSON.readTree(doc).path("conformance").asText()).isEqualTo("level-4");
    }
  }

  @Test
  void everyTextOnThePageIsEscaped() throws Exception {
    String text = sampleWith("why: Short bursts are capped so that one caller cannot starve the others.",
        "why: 'Bursts <script>alert(\"x\")</script> & co are capped so that others get a turn.'")
        .replace("name: Headroom demo", "name: \"A <b>bold</b> demo\"");
    try (Gateway g = start(GatewayConfig.parse(text, "escaped.yaml"))) {
      String body = send(g, "GET", "/docs/limits").body();
      assertThat(body).contains("Bursts &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; co are capped",
          "<title>Limits of A &lt;b&gt;bold&lt;/b&gt; demo</title>");
      assertThat(body).doesNotContain("<script>", "<b>");
    }
  }

  /** Level 1 needs every non-success body structured: a listed route relaying raw upstream errors cannot promise it. */
  @Test
  void aRouteThatDoesNotNormaliseErrorsDeclaresNone() throws Exception {
    String text = sampleWith("    dialect: ietf\n    normaliseErrors: true\n  - name: items", "    dialect: ietf\n  - name: items");
    try (Gateway g = start(GatewayConfig.parse(text, "raw.yaml"))) {
      assertThat(JSON.readTree(send(g, "GET", "/api/limits").body()).path("conformance").asText()).isEqualTo("none");
    }
  }

  @Test
  void aDeclaredLevelIsPublishedAndAnOverclaimIsOneWarningAtLoad() throws Exception {
    String text = sampleWith("  humanUrl: /docs/limits\n", "  humanUrl: /docs/limits\n  conformance: level-4\n")
        .replaceFirst("      alternativeEndpoint: /cached/hello\n", "");
    PrintStream err = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    Gateway g;
    try {
      System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
      g = start(GatewayConfig.parse(text, "overclaim.yaml"));
    } finally {
      System.setErr(err);
    }
    try (g) {
      assertThat(JSON.readTree(send(g, "GET", "/.well-known/limits").body()).path("conformance").asText()).isEqualTo("level-4");
    }
    assertThat(captured.toString(StandardCharsets.UTF_8).lines().filter(l -> l.contains("service.conformance")).toList())
        .singleElement().satisfies(l -> assertThat(l).contains("WARN").endsWith("service.conformance declares level-4 but "
            + "this configuration delivers level-2: policy 'burst' of GET /hello offers no cachedResultUrl, "
            + "alternativeEndpoint or upgradeUrl (level 3)"));
  }
}
