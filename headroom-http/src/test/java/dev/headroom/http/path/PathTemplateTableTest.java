package dev.headroom.http.path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvFileSource;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The one path-template grammar (Graceful Boundaries section 1 {@code endpoint}: "path pattern",
 * which the spec leaves undefined), as a table every front end shares: {@code path-templates.csv}.
 */
class PathTemplateTableTest {

  @ParameterizedTest(name = "{0} covers {1}: {2}")
  @CsvFileSource(resources = "path-templates.csv", delimiter = '|')
  void rawPaths(String template, String path, boolean covered) {
    assertThat(PathTemplate.parse(template).matches(path)).isEqualTo(covered);
  }

  @ParameterizedTest(name = "{0} covers {1}: {2}")
  @CsvFileSource(resources = "path-templates.csv", delimiter = '|')
  void decodedPathsAgreeWhereTheContainerWouldAcceptThem(String template, String path, boolean covered) {
    if (path.toLowerCase(Locale.ROOT).contains("%2f")) {
      return; // containers refuse an encoded / (Servlet 6.0 section 3.5.2): no decoded form to compare
    }
    String decoded = URI.create("http://h" + path).getPath();
    assertThat(PathTemplate.parse(template).matchesDecoded(decoded)).isEqualTo(covered);
  }

  @ParameterizedTest(name = "{0}")
  @CsvFileSource(resources = "path-templates.csv", delimiter = '|')
  void theCanonicalFormReadsBackAsTheSameTemplateForWritersAndReaders(String template, String path, boolean covered) {
    PathTemplate t = PathTemplate.parse(template);
    assertThat(PathTemplate.parse(t.toString())).isEqualTo(t);
    PathTemplate read = PathTemplate.parsePublished(t.toString());
    assertThat(read).isEqualTo(t);
    assertThat(read.matches(path)).isEqualTo(covered);
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource(delimiter = '|', value = {
      "/a/|/a",
      "/|/",
      "/%69tems|/items",
      "/a%2a|/a%2A",
      "/%3aid|/%3Aid",
      "/a:b|/a:b",
      "/caf%c3%a9|/caf%C3%A9",
      "/a/{id:[0-9]+}/**|/a/{id:[0-9]+}/**",
  })
  void canonicalForm(String template, String canonical) {
    assertThat(PathTemplate.parse(template).toString()).isEqualTo(canonical);
  }

  @ParameterizedTest(name = "[{index}] {0}")
  @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
      "a/b|0|a template starting with /",
      "\"\"|0|a template starting with /",
      "/a/**/b|3|** only as the last segment",
      "/a/**/**|3|** only as the last segment",
      "/a//b|3|not an empty one",
      "/a/x{id}|4|a whole segment {name}",
      "/a/*.json|3|a whole segment {name}",
      "/a/{id:a/b}|3|a regex cannot contain /",
      "/a/{id|3|whole-segment variable",
      "/a/{1x}|4|a variable name",
      "/a/{id:}|7|a regex of 1 to 128",
      "/a/{id:[}|7|a Java regex",
      "/a/%zz|3|a percent escape %XX",
      "/a/%4|3|a percent escape %XX",
      "/a/b%2Fc|3|no encoded /",
      "/a/..|3|no dot segment",
      "/a/%2E|3|no dot segment",
      "/a/:id|3|{name} for a variable",
      "/a b|2|a printable ASCII character",
      "/a/caf\u00e9|6|a printable ASCII character",
      "/a/[x]|3|a path character",
  })
  void invalidTemplatesAreRefusedNamingTemplatePositionAndExpectation(String template, int position, String expected) {
    assertThatThrownBy(() -> PathTemplate.parse(template))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("path template '" + template + "'")
        .hasMessageContaining("at position " + position + ": expected ")
        .hasMessageContaining(expected);
  }

  @Test
  void nullAndOverlongTemplatesAreRefused() {
    assertThatThrownBy(() -> PathTemplate.parse(null)).hasMessageContaining("got null");
    String longTemplate = "/" + "a".repeat(PathTemplate.MAX_LENGTH);
    assertThatThrownBy(() -> PathTemplate.parse(longTemplate)).hasMessageContaining("at most 512 characters");
    String longRegex = "/{x:" + "a".repeat(PathTemplate.MAX_REGEX_LENGTH + 1) + "}";
    assertThatThrownBy(() -> PathTemplate.parse(longRegex)).hasMessageContaining("a regex of 1 to 128");
  }

  @Test
  void pathsThatAreNotAbsolutePathsMatchNothing() {
    PathTemplate all = PathTemplate.parse("/**");
    assertThat(all.matches(null)).isFalse();
    assertThat(all.matches("")).isFalse();
    assertThat(all.matches("*")).isFalse();
    assertThat(all.matches("a/b")).isFalse();
  }

  @Test
  void malformedEscapesInPathsStayAsWrittenAndMalformedUtf8NeverMatchesAnEncodedLiteral() {
    assertThat(PathTemplate.parse("/a/{x}").matches("/a/%zz")).isTrue();
    assertThat(PathTemplate.parse("/%25zz").matches("/%zz")).isTrue();
    assertThat(PathTemplate.parse("/caf%C3%A9").matches("/caf%C3")).isFalse();
  }

  /** Other services publish {@code :name} and {@code /a/*}; read as one segment each, a query ignored. */
  @ParameterizedTest(name = "{0} covers {1}: {2}")
  @CsvSource(delimiter = '|', value = {
      "/a/:id|/a/7|true",
      "/a/:id|/a/7/8|false",
      "/a/:id/b|/a/7/b|true",
      "/a/*|/a/x|true",
      "/a/*|/a/x/y|false",
      "/api/result?id=example.com|/api/result|true",
      "/docs#top|/docs|true",
      "/caf\u00e9|/caf%C3%A9|true",
  })
  void publishedPatterns(String pattern, String path, boolean covered) {
    assertThat(PathTemplate.parsePublished(pattern).matches(path)).isEqualTo(covered);
  }

  @Test
  void publishedVariablesAreWrittenBackInTheOneCanonicalForm() {
    assertThat(PathTemplate.parsePublished("/a/:id/*").toString()).isEqualTo("/a/{id}/*");
    assertThat(PathTemplate.parsePublished("/caf\u00e9").toString()).isEqualTo("/caf%C3%A9");
    assertThatThrownBy(() -> PathTemplate.parsePublished("/a/{id}.json"))
        .hasMessageContaining("path template '/a/{id}.json': at position 3");
  }

  @Test
  void literalsTranslatedFromDecodedTextMatchThatTextExactly() {
    assertThat(PathTemplate.literal("caf\u00e9")).isEqualTo("caf%C3%A9");
    assertThat(PathTemplate.literal(":batch")).isEqualTo("%3Abatch");
    assertThat(PathTemplate.literal("a*b{c}")).isEqualTo("a%2Ab%7Bc%7D");
    assertThat(PathTemplate.parse("/x/" + PathTemplate.literal("a b*")).matches("/x/a%20b*")).isTrue();
    assertThatThrownBy(() -> PathTemplate.literal("a/b")).hasMessageContaining("'a/b'");
    assertThatThrownBy(() -> PathTemplate.literal("..")).hasMessageContaining("not . or ..");
  }

  @Test
  void literalsAndWildcards() {
    assertThat(PathTemplate.parse("/a/b").isLiteral()).isTrue();
    assertThat(PathTemplate.parse("/").isLiteral()).isTrue();
    assertThat(PathTemplate.parse("/a/*").isLiteral()).isFalse();
    assertThat(PathTemplate.parse("/a/{id}").isLiteral()).isFalse();
    assertThat(PathTemplate.parse("/a/**").isLiteral()).isFalse();
  }
}
