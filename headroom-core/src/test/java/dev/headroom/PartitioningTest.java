package dev.headroom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.Partitioning.Component;
import dev.headroom.Partitioning.Part;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The partitioning grammar (draft-ietf-httpapi-ratelimit-headers-09 section 6.1: "per user, per
 * application, per HTTP method, per resource, or some combination"), read once into a typed value.
 */
class PartitioningTest {

  private static final String EXPECTED_COMPONENT =
      "expected one of client-ip, api-key, header:Name, user, client-cert, route, method or global, got ";

  @ParameterizedTest(name = "''{0}'' reads as {1}")
  @CsvSource(delimiter = ';', quoteCharacter = '"', value = {
      "client-ip; client-ip",
      "ip; client-ip",
      "CLIENT-IP; client-ip",
      "api-key; api-key",
      "key; api-key",
      "header:X-Api-Key; api-key",
      "header:x-api-key; api-key",
      "header:X-Tenant; header:X-Tenant",
      "HEADER: X-Tenant ; header:X-Tenant",
      "user; user",
      "client-cert; client-cert",
      "CLIENT-CERT; client-cert",
      "client-cert|client-ip; client-cert|client-ip",
      "route; route",
      "method; method",
      "global; global",
      "client-ip+route; client-ip+route",
      "\" api-key + route | client-ip \"; api-key+route|client-ip",
      "user|api-key|client-ip; user|api-key|client-ip",
      "header:X-Tenant + route|client-ip; header:X-Tenant+route|client-ip",
      "a+a+a+a+a+a+a+a|ip|ip|ip|ip|ip|ip|ip; api-key+api-key+api-key+api-key+api-key+api-key+api-key+api-key"
          + "|client-ip|client-ip|client-ip|client-ip|client-ip|client-ip|client-ip"})
  void validTextsReadToTheirCanonicalForm(String text, String canonical) {
    String in = text.replace("a+a+a+a+a+a+a+a", "key+key+key+key+key+key+key+key");
    Partitioning p = Partitioning.parse(in);
    assertThat(p).hasToString(canonical);
    assertThat(Partitioning.parse(p.toString())).as("the canonical text reads back to an equal value")
        .isEqualTo(p).hasSameHashCodeAs(p);
  }

  @ParameterizedTest(name = "''{0}'' is refused: {1}")
  @CsvSource(delimiter = ';', quoteCharacter = '"', value = {
      "cookie; partitioning: in 'cookie' at position 0: " + EXPECTED_COMPONENT + "'cookie'",
      "client-ip+cookie; partitioning: in 'client-ip+cookie' at position 10: " + EXPECTED_COMPONENT + "'cookie'",
      "api-key|; partitioning: in 'api-key|' at position 8: " + EXPECTED_COMPONENT + "''",
      "user++route; partitioning: in 'user++route' at position 5: " + EXPECTED_COMPONENT + "''",
      "api-key | bogus; partitioning: in 'api-key | bogus' at position 10: " + EXPECTED_COMPONENT + "'bogus'",
      "header:Bad Name; partitioning: in 'header:Bad Name' at position 0: expected a header field name after "
          + "header: (letters, digits, - and other token characters, at most 64), got 'Bad Name'",
      "header:; partitioning: in 'header:' at position 0: expected a header field name after "
          + "header: (letters, digits, - and other token characters, at most 64), got ''",
      "ip+ip+ip+ip+ip+ip+ip+ip+ip; partitioning: in 'ip+ip+ip+ip+ip+ip+ip+ip+ip' at position 23: expected at most 8 "
          + "components joined by +",
      "ip|ip|ip|ip|ip|ip|ip|ip|user; partitioning: in 'ip|ip|ip|ip|ip|ip|ip|ip|user' at position 23: expected at most 8 "
          + "alternatives joined by |"})
  void invalidTextsAreRefusedNamingValuePositionAndExpectation(String text, String message) {
    assertThatThrownBy(() -> Partitioning.parse(text)).isInstanceOf(IllegalArgumentException.class).hasMessage(message);
  }

  @Test
  void blankOversizedAndNullTextsAreRefused() {
    String rule = "partitioning: expected components client-ip, api-key, header:Name, user, client-cert, route, method or global "
        + "joined by + and | (at most 256 characters), got ";
    assertThatThrownBy(() -> Partitioning.parse("")).hasMessage(rule + "''");
    assertThatThrownBy(() -> Partitioning.parse("  ")).hasMessage(rule + "'  '");
    assertThatThrownBy(() -> Partitioning.parse(null)).hasMessage(rule + "null");
    assertThatThrownBy(() -> Partitioning.parse("ip+".repeat(86))).hasMessageStartingWith(rule + "'ip+ip+")
        .hasMessageEndingWith("...(258 chars)'");
    assertThatThrownBy(() -> Partitioning.parse("rout\u00e9")).hasMessageEndingWith("got 'rout\\u00e9'");
  }

  @Test
  void partsAreTyped() {
    Partitioning p = Partitioning.parse("header:X-Tenant+route|api-key");
    assertThat(p.alternatives()).containsExactly(
        List.of(Part.header("X-Tenant"), Part.of(Component.ROUTE)), List.of(Part.of(Component.API_KEY)));
    assertThat(p.alternatives().get(0).get(0).component()).isEqualTo(Component.HEADER);
    assertThat(p.alternatives().get(0).get(0).headerName()).contains("X-Tenant");
    assertThat(p.alternatives().get(1).get(0).headerName()).contains(Partitioning.API_KEY_HEADER);
    assertThat(p.alternatives().get(0).get(1).headerName()).isEmpty();
    assertThat(Partitioning.of(p.alternatives())).isEqualTo(p);
    assertThatThrownBy(() -> p.alternatives().add(List.of())).isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> Part.of(Component.HEADER)).hasMessageContaining("Part.header(name)");
    assertThatThrownBy(() -> Partitioning.of(List.of())).hasMessage("partitioning: expected 1 to 8 alternatives, got 0");
  }

  @Test
  void aPolicyHoldsTheTypedValueAndRefusesBadTextWhenBuilt() {
    QuotaPolicy.Builder b = QuotaPolicy.builder("api").quota(10).window(Duration.ofSeconds(60));
    QuotaPolicy typed = b.partitioning(Partitioning.parse("key|ip")).build();
    QuotaPolicy text = b.partitioning(" api-key | client-ip ").build();
    assertThat(text).isEqualTo(typed);
    assertThat(text.partitioning()).contains(Partitioning.parse("api-key|client-ip"));
    assertThat(text.toBuilder().build().partitioning()).isEqualTo(text.partitioning());
    assertThat(b.partitioning((Partitioning) null).build().partitioning()).isEmpty();
    assertThatThrownBy(() -> b.partitioning("cookie").build())
        .hasMessage("policy 'api': partitioning: in 'cookie' at position 0: " + EXPECTED_COMPONENT + "'cookie'");
  }
}
