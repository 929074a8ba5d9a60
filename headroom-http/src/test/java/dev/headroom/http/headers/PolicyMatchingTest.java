package dev.headroom.http.headers;

import static dev.headroom.http.headers.RateLimitFieldsTest.kinds;
import static dev.headroom.http.headers.RateLimitFieldsTest.parse;
import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.http.headers.Diagnostic.Kind;
import org.junit.jupiter.api.Test;

/**
 * {@link RateLimitFields#policyOf}: which advertised policy a service limit reports on (draft-09
 * sections 4 and 5; {@code pk} is optional on both fields, sections 4.1.4 and 5.1.3). The same
 * matcher decides the {@code UNKNOWN_POLICY} note.
 */
class PolicyMatchingTest {

  private static QuotaPolicyItem match(RateLimitFields f) {
    return f.policyOf(f.limits().get(0)).orElse(null);
  }

  @Test
  void samePkMatches() {
    RateLimitFields f = parse("RateLimit-Policy", "\"a\";q=5;w=1;pk=:AQ==:, \"a\";q=10;w=5;pk=:Ag==:",
        "RateLimit", "\"a\";r=9;t=5;pk=:Ag==:");
    assertThat(match(f).quota()).isEqualTo(10);
    assertThat(kinds(f)).doesNotContain(Kind.UNKNOWN_POLICY);
  }

  // express-rate-limit, standardHeaders: 'draft-8'
  @Test
  void aPolicyWithPkMatchesALimitWithoutOneByName() {
    RateLimitFields f = parse("RateLimit-Policy", "\"10-in-5sec\"; q=10; w=5; pk=:1pc3Rm3mFm7G9qRk:",
        "RateLimit", "\"10-in-5sec\"; r=9; t=5");
    assertThat(match(f).quota()).isEqualTo(10);
    assertThat(match(f).window()).hasValueSatisfying(w -> assertThat(w.getSeconds()).isEqualTo(5));
    assertThat(kinds(f)).doesNotContain(Kind.UNKNOWN_POLICY);
  }

  @Test
  void aLimitWithPkMatchesAPolicyWithoutOneByName() {
    RateLimitFields f = parse("RateLimit-Policy", "\"day\";q=1000;w=86400", "RateLimit", "\"day\";r=7;t=60;pk=:AQ==:");
    assertThat(match(f).quota()).isEqualTo(1000);
    assertThat(kinds(f)).doesNotContain(Kind.UNKNOWN_POLICY);
  }

  @Test
  void anExactPkMatchWinsOverANameOnlyOne() {
    RateLimitFields f = parse("RateLimit-Policy", "\"a\";q=1;w=1, \"a\";q=2;w=2;pk=:AQ==:", "RateLimit", "\"a\";r=1;pk=:AQ==:");
    assertThat(match(f).quota()).isEqualTo(2);
  }

  @Test
  void twoDifferentKeysAreTwoPartitionsAndDoNotMatch() {
    RateLimitFields f = parse("RateLimit-Policy", "\"a\";q=10;w=5;pk=:AQ==:", "RateLimit", "\"a\";r=9;t=5;pk=:Ag==:");
    assertThat(match(f)).isNull();
    assertThat(kinds(f)).contains(Kind.UNKNOWN_POLICY);
  }

  @Test
  void anotherNameDoesNotMatch() {
    RateLimitFields f = parse("RateLimit-Policy", "\"a\";q=10;w=5", "RateLimit", "\"b\";r=9;t=5");
    assertThat(match(f)).isNull();
    assertThat(kinds(f)).contains(Kind.UNKNOWN_POLICY);
  }

  // express-rate-limit, standardHeaders: 'draft-7' and 'draft-6'
  @Test
  void olderDialectsMatchTheUnnamedPolicyOfTheirQuota() {
    RateLimitFields d7 = parse("RateLimit-Policy", "10;w=5", "RateLimit", "limit=10, remaining=9, reset=5");
    assertThat(match(d7).quota()).isEqualTo(10);
    RateLimitFields d6 = parse("RateLimit-Policy", "10;w=5", "RateLimit-Limit", "10", "RateLimit-Remaining", "9",
        "RateLimit-Reset", "5");
    assertThat(match(d6).quota()).isEqualTo(10);
    RateLimitFields other = parse("RateLimit-Policy", "100;w=60", "RateLimit", "limit=10, remaining=9, reset=5");
    assertThat(match(other)).isNull();
  }
}
