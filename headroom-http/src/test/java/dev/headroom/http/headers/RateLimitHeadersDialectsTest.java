package dev.headroom.http.headers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Choosing dialects: varargs and any collection type, with errors that name the field. */
class RateLimitHeadersDialectsTest {

  @Test
  void varargsDialectsAreAccepted() {
    RateLimitHeaders h = RateLimitHeaders.builder().dialects(HeaderDialect.IETF, HeaderDialect.X_RATELIMIT).build();
    assertThat(h.dialects()).containsExactly(HeaderDialect.IETF, HeaderDialect.X_RATELIMIT);
  }

  @Test
  void immutableCollectionsThatRejectNullQueriesAreAccepted() {
    assertThat(RateLimitHeaders.builder().dialects(List.of(HeaderDialect.DRAFT_07)).build().dialects())
        .containsExactly(HeaderDialect.DRAFT_07);
    assertThat(RateLimitHeaders.builder().dialects(Set.of(HeaderDialect.DRAFT_06)).build().dialects())
        .containsExactly(HeaderDialect.DRAFT_06);
    assertThat(RateLimitHeaders.builder().dialects(EnumSet.of(HeaderDialect.IETF)).build().dialects())
        .containsExactly(HeaderDialect.IETF);
  }

  @Test
  void aNullDialectIsRefusedNamingTheField() {
    assertThatThrownBy(() -> RateLimitHeaders.builder().dialects(HeaderDialect.IETF, null))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("dialects: expected at least one of");
    assertThatThrownBy(() -> RateLimitHeaders.builder().dialects(Arrays.asList((HeaderDialect) null)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("dialects:");
    assertThatThrownBy(() -> RateLimitHeaders.builder().dialects(List.of()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("dialects:");
  }
}
