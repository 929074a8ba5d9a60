package dev.headroom.enforcement.partition;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.util.Optional;

/**
 * Coverage-guided fuzzing of the {@code Forwarded} / {@code X-Forwarded-For} walk: whatever the
 * headers hold, resolving never throws, always yields a canonical IP literal, and yields the
 * direct peer whenever the peer is not trusted.
 *
 * <p>{@code mvn verify} replays the committed inputs in
 * {@code src/test/resources/dev/headroom/enforcement/partition/ForwardedFuzzTestInputs/resolve/}. To fuzz
 * for five minutes:
 *
 * <pre>
 * JAZZER_FUZZ=1 mvn -B -pl headroom-http -am test -Dtest=ForwardedFuzzTest -Dsurefire.failIfNoSpecifiedTests=false
 * </pre>
 */
class ForwardedFuzzTest {

  private static final ClientAddressResolver XFF = ClientAddressResolver.builder()
      .trustedProxy("10.0.0.0/8").trustedProxy("fd00::/8").maxHeaderLength(512).build();
  private static final ClientAddressResolver FORWARDED = ClientAddressResolver.builder()
      .trustedProxy("10.0.0.0/8").trustedProxy("fd00::/8").header(ForwardedHeader.FORWARDED).maxHeaderLength(512).build();

  @FuzzTest(maxDuration = "5m") // the length of a JAZZER_FUZZ=1 run; regression runs replay the inputs only
  void resolve(FuzzedDataProvider data) {
    boolean trustedPeer = data.consumeBoolean();
    String peer = trustedPeer ? "10.0.0.1" : data.consumeString(48);
    RequestView.Builder b = RequestView.builder().remoteAddress(peer);
    int lines = data.consumeInt(0, 3);
    for (int i = 0; i < lines; i++) {
      String line = data.consumeString(300);
      b.header("X-Forwarded-For", line).header("Forwarded", line);
    }
    RequestView r = b.build();
    for (ClientAddressResolver resolver : new ClientAddressResolver[] {XFF, FORWARDED}) {
      Optional<String> client = resolver.resolve(r);
      Optional<byte[]> peerBytes = IpLiteral.parse(peer);
      if (peerBytes.isEmpty()) {
        continue; // a malformed peer may still be bracketed or zoned; it must simply not throw
      }
      assertThat(client).isPresent();
      String c = client.get();
      assertThat(IpLiteral.parse(c).map(IpLiteral::format)).contains(c);
      boolean trusted = resolver.trustedProxies().stream().anyMatch(range -> range.contains(peerBytes.get()));
      if (!trusted) {
        assertThat(c).isEqualTo(IpLiteral.format(peerBytes.get()));
      }
    }
    PartitionKeyDerivation.parse("client-ip+route|api-key", XFF).derive(r);
    ForwardedChain.forElement(data.consumeRemainingAsString());
  }
}
