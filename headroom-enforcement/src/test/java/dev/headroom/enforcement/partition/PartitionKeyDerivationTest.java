package dev.headroom.enforcement.partition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.PartitionKey;
import dev.headroom.Partitioning;
import dev.headroom.http.body.LimitScope;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** Partition keys from a request view: draft-ietf-httpapi-ratelimit-headers-09 section 6.1. */
class PartitionKeyDerivationTest {

  private static final ClientAddressResolver PROXIES = ClientAddressResolver.builder().trustedProxy("10.0.0.0/8").build();

  private static String key(String spec, RequestView r) {
    return PartitionKeyDerivation.parse(spec, PROXIES).derive(r).value();
  }

  private static String sha256Hex16(String s) throws Exception {
    byte[] d = MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
    return HexFormat.of().formatHex(d, 0, 16);
  }

  @Test
  void clientIpBehindTrustedProxy() {
    RequestView r = RequestView.builder().remoteAddress("10.0.0.1").header("X-Forwarded-For", "198.51.100.7").build();
    assertThat(key("client-ip", r)).isEqualTo("ip:198.51.100.7");
    assertThat(key("client-ip", RequestView.builder().build())).isEqualTo("ip:unknown");
  }

  @Test
  void apiKeyIsHashedNeverKeptRaw() throws Exception {
    RequestView r = RequestView.builder().header("x-api-key", "s3cr3t-key").build();
    String k = key("api-key", r);
    assertThat(k).isEqualTo("key:" + sha256Hex16("s3cr3t-key")).doesNotContain("s3cr3t");
    assertThat(key("header:Authorization", RequestView.builder().header("Authorization", "Bearer abc").build()))
        .isEqualTo("key:" + sha256Hex16("Bearer abc"));
  }

  @Test
  void clientCertIsTheVerifiedSubjectReadableOrHashed() throws Exception {
    RequestView alice = RequestView.builder().clientCertificateSubject("CN=alice,O=Example Corp").build();
    assertThat(key("client-cert", alice)).isEqualTo("cert:CN=alice,O=Example Corp");
    assertThat(key("client-cert", RequestView.builder().build())).isEqualTo("cert:none");
    String odd = "CN=" + "x".repeat(300);
    assertThat(key("client-cert", RequestView.builder().clientCertificateSubject(odd).build()))
        .isEqualTo("cert:sha256-" + sha256Hex16(odd));
    assertThat(key("client-cert", RequestView.builder().clientCertificateSubject("CN=a|b").build()))
        .isEqualTo("cert:sha256-" + sha256Hex16("CN=a|b"));
    // without a certificate the next alternative decides
    assertThat(key("client-cert|client-ip", RequestView.builder().remoteAddress("203.0.113.9").build()))
        .isEqualTo("ip:203.0.113.9");
    assertThat(PartitionKeyDerivation.parse("client-cert", PROXIES).scope()).isEqualTo(LimitScope.KEY);
  }

  @Test
  void missingOversizedOrRepeatedHeadersFallBack() {
    assertThat(key("api-key", RequestView.builder().build())).isEqualTo("key:none");
    assertThat(key("api-key", RequestView.builder().header("X-Api-Key", "x".repeat(5000)).build())).isEqualTo("key:none");
    assertThat(key("api-key", RequestView.builder().header("X-Api-Key", "a").header("X-Api-Key", "b").build()))
        .isEqualTo("key:none");
    assertThat(key("api-key", RequestView.builder().header("X-Api-Key", "  ").build())).isEqualTo("key:none");
  }

  @Test
  void userRouteMethodAndGlobal() throws Exception {
    RequestView r = RequestView.builder().method("POST").path("/api/items/42").route("/api/items/{id}").user("alice").build();
    assertThat(key("user", r)).isEqualTo("user:alice");
    assertThat(key("route", r)).isEqualTo("route:/api/items/{id}");
    assertThat(key("method", r)).isEqualTo("method:POST");
    assertThat(PartitionKeyDerivation.parse("global", PROXIES).derive(r)).isSameAs(PartitionKey.GLOBAL);
    assertThat(key("user", RequestView.builder().user("al ice").build())).isEqualTo("user:sha256-" + sha256Hex16("al ice"));
    assertThat(key("user", RequestView.builder().build())).isEqualTo("user:anonymous");
    assertThat(key("route", RequestView.builder().path("/attacker/controlled").build())).isEqualTo("route:unmatched");
    assertThat(key("method", RequestView.builder().method("GET /x").build())).isEqualTo("method:other");
  }

  @Test
  void compositesJoinAndAlternativesFallThrough() {
    RequestView keyed = RequestView.builder().remoteAddress("198.51.100.7").route("/a").header("X-Api-Key", "k").build();
    RequestView anonymous = RequestView.builder().remoteAddress("198.51.100.7").route("/a").build();
    assertThat(key("client-ip+route", anonymous)).isEqualTo("ip:198.51.100.7|route:/a");
    assertThat(key("api-key|client-ip", keyed)).startsWith("key:");
    assertThat(key("api-key|client-ip", anonymous)).isEqualTo("ip:198.51.100.7");
    assertThat(key("user|api-key", anonymous)).isEqualTo("key:none");
    assertThat(key("api-key + route | client-ip", anonymous)).isEqualTo("ip:198.51.100.7");
  }

  @Test
  void oversizedCompositeKeysAreHashedIntoTheBound() {
    String route = "/r" + "x".repeat(254);
    String user = "u".repeat(128);
    RequestView r = RequestView.builder().remoteAddress("2001:db8::1").route(route).user(user).build();
    PartitionKey k = PartitionKeyDerivation.parse("user+route+route+client-ip", PROXIES).derive(r);
    assertThat(k.value()).startsWith("sha256-").hasSize(7 + 32);
  }

  @Test
  void scopeNamesWhoIsToldApart() {
    assertThat(PartitionKeyDerivation.parse("client-ip+route", PROXIES).scope()).isEqualTo(LimitScope.IP);
    assertThat(PartitionKeyDerivation.parse("api-key|client-ip", PROXIES).scope()).isEqualTo(LimitScope.KEY);
    assertThat(PartitionKeyDerivation.parse("user+api-key", PROXIES).scope()).isEqualTo(LimitScope.USER);
    assertThat(PartitionKeyDerivation.parse("route", PROXIES).scope()).isEqualTo(LimitScope.GLOBAL);
    assertThat(PartitionKeyDerivation.parse("header:X-Tenant + route|client-ip", PROXIES).spec())
        .isEqualTo("header:X-Tenant+route|client-ip");
  }

  @Test
  void badSpecsAreRefusedNamingTheComponent() {
    assertThatThrownBy(() -> PartitionKeyDerivation.parse("client-ip+cookie", PROXIES))
        .hasMessageContaining("'cookie'").hasMessageContaining("client-ip+cookie").hasMessageContaining("expected one of");
    assertThatThrownBy(() -> PartitionKeyDerivation.parse("", PROXIES)).hasMessageContaining("partitioning: expected");
    assertThatThrownBy(() -> PartitionKeyDerivation.parse("header:Bad Name", PROXIES)).hasMessageContaining("'Bad Name'");
    assertThatThrownBy(() -> PartitionKeyDerivation.parse("api-key|", PROXIES)).hasMessageContaining("got ''");
  }

  @Test
  void aTypedPartitioningDerivesTheSameKeysAsItsText() {
    Partitioning typed = Partitioning.parse("header:X-Tenant+route|client-ip");
    PartitionKeyDerivation d = PartitionKeyDerivation.of(typed, PROXIES);
    RequestView tenant = RequestView.builder().remoteAddress("198.51.100.7").route("/a").header("X-Tenant", "t1").build();
    RequestView anonymous = RequestView.builder().remoteAddress("10.0.0.1").header("X-Forwarded-For", "198.51.100.8").build();
    assertThat(d.derive(tenant).value()).isEqualTo(key("header:X-Tenant+route|client-ip", tenant)).endsWith("|route:/a");
    assertThat(d.derive(anonymous).value()).isEqualTo("ip:198.51.100.8");
    assertThat(d.partitioning()).isSameAs(typed);
    assertThat(d).isEqualTo(PartitionKeyDerivation.parse("header:X-Tenant + route | ip", PROXIES));
    assertThat(LimitScope.of(typed)).isEqualTo(LimitScope.KEY);
    assertThat(PartitionKeyDerivation.apiKey().and(PartitionKeyDerivation.route()).orElse(PartitionKeyDerivation.global())
        .partitioning()).isEqualTo(Partitioning.parse("api-key+route|global"));
  }
}
