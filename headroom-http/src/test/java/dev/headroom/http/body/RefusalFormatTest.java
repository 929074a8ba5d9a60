package dev.headroom.http.body;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** RFC 9110 section 12.5.1 content negotiation: JSON unless HTML is explicitly preferred. */
class RefusalFormatTest {

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource(delimiter = '|', value = {
      "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8 | HTML",
      "text/html | HTML",
      "text/html;q=0.9, application/json;q=0.5 | HTML",
      "*/* | PROBLEM_JSON",
      "'' | PROBLEM_JSON",
      "application/json | JSON",
      "application/problem+json | PROBLEM_JSON",
      "application/json, application/problem+json | PROBLEM_JSON",
      "text/html, application/json | JSON",
      "text/html, */* | PROBLEM_JSON",
      "text/*, */*;q=0.1 | PROBLEM_JSON",
      "text/html;q=0 | PROBLEM_JSON",
      "text/html;q=2 | PROBLEM_JSON",
      "text/html;q=abc | PROBLEM_JSON",
      "image/png | PROBLEM_JSON",
      "text/html;q=0.5, application/*;q=0.6 | PROBLEM_JSON",
      "TEXT/HTML | HTML",
  })
  void negotiates(String accept, RefusalFormat expected) {
    assertThat(RefusalFormat.negotiate(accept)).isEqualTo(expected);
  }

  @ParameterizedTest
  @CsvSource({"PROBLEM_JSON, application/problem+json", "JSON, application/json", "HTML, text/html; charset=utf-8"})
  void mediaTypes(RefusalFormat format, String mediaType) {
    assertThat(format.mediaType()).isEqualTo(mediaType);
    assertThat(RefusalFormat.negotiate(null)).isEqualTo(RefusalFormat.PROBLEM_JSON);
    assertThat(RefusalFormat.negotiate("text/html," + "x/y,".repeat(1000))).isEqualTo(RefusalFormat.PROBLEM_JSON);
  }
}
