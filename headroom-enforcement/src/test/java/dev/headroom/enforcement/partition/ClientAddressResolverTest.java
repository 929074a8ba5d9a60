package dev.headroom.enforcement.partition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The client behind trusted proxies: RFC 7239 and X-Forwarded-For, walked right to left. */
class ClientAddressResolverTest {

  private static final ClientAddressResolver XFF = ClientAddressResolver.builder()
      .trustedProxy("10.0.0.0/8").trustedProxy("fd00::/8").build();
  private static final ClientAddressResolver FORWARDED = ClientAddressResolver.builder()
      .trustedProxy("10.0.0.0/8").trustedProxy("fd00::/8").header(ForwardedHeader.FORWARDED).build();

  /** Believes either header, Forwarded first: what the gateway's trustedProxies does. */
  private static final ClientAddressResolver BOTH = ClientAddressResolver.builder()
      .trustedProxy("10.0.0.0/8").trustedProxy("fd00::/8")
      .headers(List.of(ForwardedHeader.FORWARDED, ForwardedHeader.X_FORWARDED_FOR)).build();

  private static RequestView.Builder from(String peer) {
    return RequestView.builder().remoteAddress(peer);
  }

  @Test
  void anUntrustedPeerIsTheClientWhateverItsHeadersSay() {
    RequestView r = from("203.0.113.5").header("X-Forwarded-For", "198.51.100.1")
        .header("Forwarded", "for=198.51.100.1").build();
    assertThat(XFF.resolve(r)).contains("203.0.113.5");
    assertThat(FORWARDED.resolve(r)).contains("203.0.113.5");
    assertThat(ClientAddressResolver.direct().resolve(from("10.0.0.1").header("X-Forwarded-For", "1.2.3.4").build()))
        .contains("10.0.0.1");
  }

  @Test
  void xForwardedForIsWalkedRightToLeftSkippingTrustedHops() {
    RequestView r = from("10.0.0.1").header("X-Forwarded-For", "6.6.6.6, 198.51.100.7, 10.1.1.1").build();
    assertThat(XFF.resolve(r)).contains("198.51.100.7"); // 6.6.6.6 was written by the client itself
  }

  @Test
  void severalFieldLinesAreOneListReadLastLineFirst() {
    RequestView r = from("10.0.0.1").header("X-Forwarded-For", "6.6.6.6")
        .header("X-Forwarded-For", "198.51.100.7,10.2.2.2").build();
    assertThat(XFF.resolve(r)).contains("198.51.100.7");
  }

  @Test
  void whenEveryHopIsTrustedTheLeftmostIsTheClient() {
    RequestView r = from("10.0.0.1").header("X-Forwarded-For", "10.3.3.3, 10.2.2.2").build();
    assertThat(XFF.resolve(r)).contains("10.3.3.3");
    assertThat(XFF.resolve(from("10.0.0.1").build())).contains("10.0.0.1");
  }

  @Test
  void anUnreadableHopStopsTheWalkAtTheLastTrustedAddress() {
    assertThat(XFF.resolve(from("10.0.0.1").header("X-Forwarded-For", "198.51.100.7, garbage, 10.2.2.2").build()))
        .contains("10.2.2.2");
    assertThat(XFF.resolve(from("10.0.0.1").header("X-Forwarded-For", "unknown").build())).contains("10.0.0.1");
  }

  @Test
  void forwardedForWithQuotedIpv6AndPorts_rfc7239Section6() {
    RequestView r = from("fd00::1").header("Forwarded",
        "for=192.0.2.60;proto=http;by=203.0.113.43, for=\"[2001:db8:cafe::17]:4711\", for=\"10.9.9.9:80\"").build();
    assertThat(FORWARDED.resolve(r)).contains("2001:db8:cafe::17");
  }

  @Test
  void forwardedParametersAreCaseInsensitiveAndQuotedCommasDoNotSplit() {
    RequestView r = from("10.0.0.1").header("Forwarded", "For=\"198.51.100.9\";host=\"a,b\"").build();
    assertThat(FORWARDED.resolve(r)).contains("198.51.100.9");
  }

  @Test
  void aClientsUnterminatedQuoteCannotHideTheHopsOurProxiesWrote() {
    RequestView r = from("10.0.0.1").header("Forwarded", "for=\"6.6.6.6, for=198.51.100.7, for=10.2.2.2").build();
    assertThat(FORWARDED.resolve(r)).contains("198.51.100.7");
  }

  @Test
  void forwardedElementsWithoutOrWithTwoForAreUnreadable() {
    assertThat(FORWARDED.resolve(from("10.0.0.1").header("Forwarded", "proto=https").build())).contains("10.0.0.1");
    assertThat(FORWARDED.resolve(from("10.0.0.1").header("Forwarded", "for=1.2.3.4;for=5.6.7.8").build()))
        .contains("10.0.0.1");
    assertThat(FORWARDED.resolve(from("10.0.0.1").header("Forwarded", "for=_hidden, for=10.2.2.2").build()))
        .contains("10.2.2.2");
  }

  @Test
  void theOtherHeaderIsIgnored() {
    RequestView r = from("10.0.0.1").header("X-Forwarded-For", "198.51.100.7").build();
    assertThat(FORWARDED.resolve(r)).contains("10.0.0.1");
  }

  @Test
  void hopsAndLengthAreBounded() {
    ClientAddressResolver two = ClientAddressResolver.builder().trustedProxy("10.0.0.0/8").maxHops(2).build();
    RequestView deep = from("10.0.0.1").header("X-Forwarded-For", "198.51.100.7, 10.0.0.4, 10.0.0.3, 10.0.0.2").build();
    assertThat(two.resolve(deep)).contains("10.0.0.3");
    String huge = "198.51.100.7," + " ".repeat(10_000) + "10.0.0.2";
    assertThat(XFF.resolve(from("10.0.0.1").header("X-Forwarded-For", huge).build())).contains("10.0.0.1");
  }

  @Test
  void mappedAndBracketedPeersAndZonesAreNormalised() {
    assertThat(XFF.resolve(from("::ffff:10.0.0.1").header("X-Forwarded-For", "198.51.100.7").build()))
        .contains("198.51.100.7");
    assertThat(XFF.resolve(from("[2001:db8::5]").build())).contains("2001:db8::5");
    assertThat(XFF.resolve(from("fe80::1%eth0").build())).contains("fe80::1");
    assertThat(XFF.resolve(from("not-an-ip").build())).isEmpty();
    assertThat(XFF.resolve(RequestView.builder().build())).isEmpty();
  }

  @Test
  void ipv6ClientsArePartitionedPerSlash64ByDefault() {
    assertThat(XFF.partition(from("2001:db8:1:2:aaaa::1").build())).contains("2001:db8:1:2::/64");
    ClientAddressResolver exact = ClientAddressResolver.builder().ipv6PrefixLength(128).build();
    assertThat(exact.partition(from("2001:db8:1:2:aaaa::1").build())).contains("2001:db8:1:2:aaaa::1");
  }

  @Test
  void badConfigurationIsRefusedWithFieldAndValue() {
    assertThatThrownBy(() -> ClientAddressResolver.builder().maxHops(0)).hasMessage("maxHops: expected 1 to 64, got 0");
    assertThatThrownBy(() -> ClientAddressResolver.builder().ipv6PrefixLength(16))
        .hasMessage("ipv6PrefixLength: expected 32 to 128, got 16");
    assertThatThrownBy(() -> ClientAddressResolver.builder().trustedProxy("10.0.0.0/8x")).hasMessageContaining("10.0.0.0/8x");
  }

  // ---- both headers, Forwarded preferred (RFC 7239 section 7.4) ----

  @Test
  void eitherHeaderAloneIsBelievedFromATrustedPeer() {
    assertThat(BOTH.resolve(from("10.0.0.1").header("Forwarded", "for=198.51.100.7").build())).contains("198.51.100.7");
    assertThat(BOTH.resolve(from("10.0.0.1").header("X-Forwarded-For", "198.51.100.8").build())).contains("198.51.100.8");
    assertThat(BOTH.headers()).containsExactly(ForwardedHeader.FORWARDED, ForwardedHeader.X_FORWARDED_FOR);
    assertThat(BOTH.header()).isEqualTo(ForwardedHeader.FORWARDED);
  }

  @Test
  void neitherHeaderIsBelievedFromAnUntrustedPeer() {
    RequestView r = from("203.0.113.5").header("Forwarded", "for=198.51.100.7")
        .header("X-Forwarded-For", "198.51.100.8").build();
    assertThat(BOTH.resolve(r)).contains("203.0.113.5");
  }

  @Test
  void forwardedWinsWhenBothCameAndTheTwoAreNeverMixed() {
    RequestView r = from("10.0.0.1").header("X-Forwarded-For", "198.51.100.8")
        .header("Forwarded", "for=198.51.100.7").build();
    assertThat(BOTH.resolve(r)).contains("198.51.100.7");
    // every Forwarded hop trusted: the leftmost of Forwarded, not a hop taken from X-Forwarded-For
    RequestView trustedOnly = from("10.0.0.1").header("X-Forwarded-For", "198.51.100.8")
        .header("Forwarded", "for=10.4.4.4").build();
    assertThat(BOTH.resolve(trustedOnly)).contains("10.4.4.4");
  }

  @Test
  void anUnreadableForwardedStillWinsAndStopsTheWalkAtTheProxy() {
    for (String unreadable : new String[] {"for=unknown", "for=_hidden", "for=\"_x:_y\"", "proto=https", "for="}) {
      RequestView r = from("10.0.0.1").header("Forwarded", unreadable).header("X-Forwarded-For", "198.51.100.8").build();
      assertThat(BOTH.resolve(r)).as(unreadable).contains("10.0.0.1");
    }
    // behind a readable hop written by our own proxy, the unreadable one ends the walk there
    RequestView r = from("10.0.0.1").header("Forwarded", "for=_hidden, for=10.5.5.5").build();
    assertThat(BOTH.resolve(r)).contains("10.5.5.5");
  }

  @Test
  void aBlankForwardedLineCountsAsAbsent() {
    RequestView r = from("10.0.0.1").header("Forwarded", " ").header("X-Forwarded-For", "198.51.100.8").build();
    assertThat(BOTH.resolve(r)).contains("198.51.100.8");
  }

  @Test
  void forwardedElementsAndLinesAreWalkedRightToLeftThroughTrustedHops() {
    RequestView r = from("10.0.0.1")
        .header("Forwarded", "for=6.6.6.6, for=\"[2001:db8::1]:4711\"")
        .header("Forwarded", "for=10.7.7.7;proto=https, for=\"[fd00::9]\"").build();
    assertThat(BOTH.resolve(r)).contains("2001:db8::1");
    assertThat(BOTH.partition(r)).contains("2001:db8::/64");
    RequestView quotedV4 = from("fd00::2").header("Forwarded", "For=\"198.51.100.9:8080\"").build();
    assertThat(BOTH.resolve(quotedV4)).contains("198.51.100.9");
  }

  @Test
  void theHeaderListIsChecked() {
    assertThatThrownBy(() -> ClientAddressResolver.builder().headers(List.of()))
        .hasMessage("headers: expected one or more distinct forwarding headers, got []");
    assertThatThrownBy(() -> ClientAddressResolver.builder()
        .headers(List.of(ForwardedHeader.FORWARDED, ForwardedHeader.FORWARDED)))
        .hasMessageContaining("distinct").hasMessageContaining("FORWARDED");
  }
}
