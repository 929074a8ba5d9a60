package dev.headroom.enforcement.partition;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A {@code client-ip} key read from the connection's peer alone is derived once per connection
 * ({@link PeerKeys}); a key that read a forwarding header, or other components, never is
 * (draft-ietf-httpapi-ratelimit-headers-09 section 6.1, partition keys; RFC 7239 section 7.4:
 * forwarding headers are trusted only from trusted proxies, so they are read for every request).
 */
class PeerKeysTest {

  private static final ClientAddressResolver PROXIES = ClientAddressResolver.builder().trustedProxy("10.0.0.0/8").build();

  /** A request on a connection: the view's fields, the connection's kept keys, and how often the peer was read. */
  private static final class OnConnection implements RequestView {
    private final RequestView view;
    private final PeerKeys kept;
    final AtomicInteger peerReads;

    OnConnection(RequestView view, PeerKeys kept, AtomicInteger peerReads) {
      this.view = view;
      this.kept = kept;
      this.peerReads = peerReads;
    }

    @Override
    public Optional<String> remoteAddress() {
      peerReads.incrementAndGet();
      return view.remoteAddress();
    }

    @Override
    public String method() {
      return view.method();
    }

    @Override
    public String path() {
      return view.path();
    }

    @Override
    public Optional<String> route() {
      return view.route();
    }

    @Override
    public List<String> headers(String name) {
      return view.headers(name);
    }

    @Override
    public Optional<String> user() {
      return view.user();
    }

    @Override
    public Optional<String> clientCertificateSubject() {
      peerReads.incrementAndGet();
      return view.clientCertificateSubject();
    }

    @Override
    public PeerKeys peerKeys() {
      return kept;
    }
  }

  @Test
  void aClientCertificatesKeyIsDerivedOncePerConnection() {
    PartitionKeyDerivation d = PartitionKeyDerivation.parse("client-cert", PROXIES);
    PeerKeys connection = PeerKeys.forConnection();
    AtomicInteger reads = new AtomicInteger();
    RequestView alice = RequestView.builder().clientCertificateSubject("CN=alice").build();
    assertThat(d.derive(new OnConnection(alice, connection, reads)).value()).isEqualTo("cert:CN=alice");
    assertThat(reads.get()).isEqualTo(1);
    for (int i = 0; i < 3; i++) {
      assertThat(d.derive(new OnConnection(alice, connection, reads)).value()).isEqualTo("cert:CN=alice");
    }
    assertThat(reads.get()).as("subject reads after the first request").isEqualTo(1);
  }

  @Test
  void aDirectPeersKeyIsDerivedOncePerConnection() {
    PartitionKeyDerivation d = PartitionKeyDerivation.parse("client-ip", PROXIES);
    PeerKeys connection = PeerKeys.forConnection();
    AtomicInteger reads = new AtomicInteger();
    RequestView direct = RequestView.builder().remoteAddress("203.0.113.7").build();
    assertThat(d.derive(new OnConnection(direct, connection, reads)).value()).isEqualTo("ip:203.0.113.7");
    int afterFirst = reads.get();
    for (int i = 0; i < 3; i++) {
      assertThat(d.derive(new OnConnection(direct, connection, reads)).value()).isEqualTo("ip:203.0.113.7");
    }
    assertThat(reads.get()).as("peer reads after the first request").isEqualTo(afterFirst);
  }

  @Test
  void withoutAConnectionEveryRequestIsDerivedAnew() {
    PartitionKeyDerivation d = PartitionKeyDerivation.parse("client-ip", PROXIES);
    AtomicInteger reads = new AtomicInteger();
    RequestView direct = RequestView.builder().remoteAddress("203.0.113.7").build();
    d.derive(new OnConnection(direct, PeerKeys.NONE, reads));
    int afterFirst = reads.get();
    d.derive(new OnConnection(direct, PeerKeys.NONE, reads));
    assertThat(reads.get()).isGreaterThan(afterFirst);
  }

  @Test
  void aTrustedProxysConnectionIsReadForEveryRequest() {
    PartitionKeyDerivation d = PartitionKeyDerivation.parse("client-ip", PROXIES);
    PeerKeys connection = PeerKeys.forConnection();
    AtomicInteger reads = new AtomicInteger();
    RequestView first = RequestView.builder().remoteAddress("10.0.0.1").header("X-Forwarded-For", "198.51.100.7").build();
    RequestView second = RequestView.builder().remoteAddress("10.0.0.1").header("X-Forwarded-For", "198.51.100.8").build();
    assertThat(d.derive(new OnConnection(first, connection, reads)).value()).isEqualTo("ip:198.51.100.7");
    assertThat(d.derive(new OnConnection(second, connection, reads)).value()).isEqualTo("ip:198.51.100.8");
  }

  @Test
  void aCompositeKeyIsNeverKept() {
    PartitionKeyDerivation d = PartitionKeyDerivation.parse("client-ip+route", PROXIES);
    PeerKeys connection = PeerKeys.forConnection();
    AtomicInteger reads = new AtomicInteger();
    RequestView a = RequestView.builder().remoteAddress("203.0.113.7").route("/a").build();
    RequestView b = RequestView.builder().remoteAddress("203.0.113.7").route("/b").build();
    assertThat(d.derive(new OnConnection(a, connection, reads)).value()).isEqualTo("ip:203.0.113.7|route:/a");
    assertThat(d.derive(new OnConnection(b, connection, reads)).value()).isEqualTo("ip:203.0.113.7|route:/b");
  }

  @Test
  void eachDerivationKeepsItsOwnKey() {
    ClientAddressResolver v6 = ClientAddressResolver.builder().ipv6PrefixLength(48).build();
    PartitionKeyDerivation whole = PartitionKeyDerivation.parse("client-ip", ClientAddressResolver.direct());
    PartitionKeyDerivation prefix = PartitionKeyDerivation.parse("client-ip", v6);
    PeerKeys connection = PeerKeys.forConnection();
    AtomicInteger reads = new AtomicInteger();
    RequestView peer = RequestView.builder().remoteAddress("2001:db8:1:2::7").build();
    assertThat(whole.derive(new OnConnection(peer, connection, reads)).value()).isEqualTo("ip:2001:db8:1:2::/64");
    assertThat(prefix.derive(new OnConnection(peer, connection, reads)).value()).isEqualTo("ip:2001:db8:1::/48");
    assertThat(whole.derive(new OnConnection(peer, connection, reads)).value()).isEqualTo("ip:2001:db8:1:2::/64");
  }
}
