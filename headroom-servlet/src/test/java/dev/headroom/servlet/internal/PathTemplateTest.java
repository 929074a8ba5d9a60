package dev.headroom.servlet.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Route path templates: literal segments, one-segment variables, a final **. */
class PathTemplateTest {

  @Test
  void variablesMatchExactlyOneNonEmptySegment() {
    PathTemplate t = PathTemplate.parse("/api/items/{id}");
    assertThat(t.matches("/api/items/42")).isTrue();
    assertThat(t.matches("/api/items/42/")).isTrue();
    assertThat(t.matches("/api/items/")).isFalse();
    assertThat(t.matches("/api/items")).isFalse();
    assertThat(t.matches("/api/items/42/parts")).isFalse();
    assertThat(t.matches("/api/itemsX/42")).isFalse();
    assertThat(t.matches("/API/items/42")).isFalse();
    assertThat(PathTemplate.parse("/api/{id:\\d+}/x").matches("/api/7/x")).isTrue();
    assertThat(PathTemplate.parse("/api/*/x").matches("/api/7/x")).isTrue();
  }

  @Test
  void aFinalDoubleStarMatchesAnyRestIncludingNothing() {
    PathTemplate t = PathTemplate.parse("/files/**");
    assertThat(t.matches("/files")).isTrue();
    assertThat(t.matches("/files/a/b/c")).isTrue();
    assertThat(t.matches("/filesystem")).isFalse();
    assertThat(PathTemplate.parse("/**").matches("/anything/at/all")).isTrue();
  }

  @Test
  void rootMatchesOnlyRoot() {
    assertThat(PathTemplate.parse("/").matches("/")).isTrue();
    assertThat(PathTemplate.parse("/").matches("/a")).isFalse();
  }

  @Test
  void emptySegmentsInAPathDoNotMatchAVariable() {
    assertThat(PathTemplate.parse("/a/{x}/b").matches("/a//b")).isFalse();
  }

  @Test
  void badTemplatesAreRefusedNamingTheTemplate() {
    assertThatThrownBy(() -> PathTemplate.parse("api/items")).hasMessageContaining("starting with /").hasMessageContaining("'api/items'");
    assertThatThrownBy(() -> PathTemplate.parse("/a/**/b")).hasMessageContaining("** is only allowed as the last segment");
    assertThatThrownBy(() -> PathTemplate.parse("/a/x{id}")).hasMessageContaining("mixes text and a variable");
    assertThatThrownBy(() -> PathTemplate.parse("/a//b")).hasMessageContaining("empty segment");
    assertThatThrownBy(() -> PathTemplate.parse(null)).hasMessageContaining("got null");
  }
}
