package dev.headroom.http.body;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Graceful Boundaries section 2, HTML 429 responses: meta retry-after and a JSON alternate. */
class RefusalHtmlTest {

  private static final String HOSTILE = "<script>alert('x')</script> & \"quoted\"";

  @Test
  void thePageCarriesRetryAfterAndTheJsonAlternate() {
    Refusal r = Refusal.builder(429).type(ProblemType.QUOTA_EXCEEDED).error("rate_limit_exceeded")
        .detail("Try again in 42 seconds.").why("Limits keep the service available for everyone.")
        .limit("10 requests per hour per client address").retryAfterSeconds(42).cachedResultUrl("/r?id=1&x=2").build();
    String html = RefusalHtml.render(r, "/api/scan?format=json&id=1");
    assertThat(html).startsWith("<!DOCTYPE html>")
        .contains("<html lang=\"en\">")
        .contains("<meta name=\"retry-after\" content=\"42\">")
        .contains("<link rel=\"alternate\" type=\"application/json\" href=\"/api/scan?format=json&amp;id=1\">")
        .contains("<title>429 Quota Exceeded</title>")
        .contains("<h1>Quota Exceeded</h1>")
        .contains("<a href=\"/r?id=1&amp;x=2\">")
        .contains("<time datetime=\"PT42S\">42 seconds</time>");
  }

  @Test
  void everyInsertedValueIsEscaped() {
    // A read refusal is not validated, so the renderer is the last line of defence.
    Refusal r = Refusal.builder(429).title(HOSTILE).detail(HOSTILE).why(HOSTILE).limit(HOSTILE).error(HOSTILE)
        .humanUrl("javascript:alert(1)").upgradeUrl("\"><script>x</script>").buildRead(List.of());
    String html = RefusalHtml.render(r, "\" onload=\"alert(1)");
    assertThat(html).doesNotContain("<script>").doesNotContain("href=\"javascript:").doesNotContain("\" onload=\"")
        .contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;quoted&quot;")
        .contains("javascript:alert(1)</li>");
    assertThat(RefusalHtml.linkable("https://a.example/x")).isTrue();
    assertThat(RefusalHtml.linkable("/x:y")).isTrue();
    assertThat(RefusalHtml.linkable("JaVaScRiPt:alert(1)")).isFalse();
    assertThat(RefusalHtml.linkable("//evil.example")).isFalse();
    assertThat(RefusalHtml.linkable("data:text/html,x")).isFalse();
  }
}
