package dev.headroom.enforcement.partition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Trusted proxy ranges in CIDR notation, RFC 4632 section 3.1 and RFC 4291 section 2.3. */
class CidrRangeTest {

  @Test
  void ipv4RangeContainsItsAddressesOnly() {
    CidrRange r = CidrRange.parse("10.0.0.0/8");
    assertThat(r.contains("10.255.1.2")).isTrue();
    assertThat(r.contains("11.0.0.1")).isFalse();
    assertThat(r.contains("::ffff:10.1.2.3")).isTrue();
    assertThat(r.contains("2001:db8::1")).isFalse();
    assertThat(r.contains("not an address")).isFalse();
    assertThat(r).hasToString("10.0.0.0/8");
  }

  @Test
  void ipv6RangeAndBareAddresses() {
    assertThat(CidrRange.parse("2001:db8::/32").contains("2001:db8:ffff::1")).isTrue();
    assertThat(CidrRange.parse("2001:db8::/32").contains("2001:db9::1")).isFalse();
    assertThat(CidrRange.parse("::1").contains("::1")).isTrue();
    assertThat(CidrRange.parse("192.0.2.7").contains("192.0.2.8")).isFalse();
    assertThat(CidrRange.parse("0.0.0.0/0").contains("203.0.113.9")).isTrue();
    assertThat(CidrRange.parse("::ffff:10.0.0.0/104").contains("10.9.9.9")).isTrue();
  }

  @Test
  void badRangesAreRefusedWithTheValueAndWhatIsExpected() {
    assertThatThrownBy(() -> CidrRange.parse("10.0.0.1/8"))
        .hasMessageContaining("10.0.0.1/8").hasMessageContaining("expected 10.0.0.0/8");
    assertThatThrownBy(() -> CidrRange.parse("10.0.0.0/33")).hasMessageContaining("0 to 32");
    assertThatThrownBy(() -> CidrRange.parse("proxy.internal/8")).hasMessageContaining("proxy.internal/8")
        .hasMessageContaining("CIDR notation");
    assertThatThrownBy(() -> CidrRange.parse("10.0.0.0/x")).hasMessageContaining("prefix length");
    assertThatThrownBy(() -> CidrRange.parse(null)).hasMessageContaining("null");
  }
}
