package dev.headroom.enforcement.partition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.PartitionKey;
import dev.headroom.QuotaPolicy;
import dev.headroom.http.PartitionKeyExposure;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/** The pk parameter, draft-ietf-httpapi-ratelimit-headers-09 sections 3.1.4, 6.1 and 7.1. */
class PartitionKeyExposuresTest {

  private static final QuotaPolicy HOURLY = QuotaPolicy.builder("hourly").quota(100).window(Duration.ofHours(1)).build();
  private static final PartitionKey CLIENT = PartitionKey.of("ip:203.0.113.7");

  @Test
  void offSendsNothing() {
    assertThat(PartitionKeyExposures.off().pk(HOURLY, CLIENT)).isEmpty();
  }

  @Test
  void aClientRecomputesThePredictableHashFromTheDocumentedRecipe_section7_1() throws Exception {
    byte[] input = "hourly\u0000ip:203.0.113.7".getBytes(StandardCharsets.UTF_8);
    byte[] expected = Arrays.copyOf(MessageDigest.getInstance("SHA-256").digest(input), 16);
    assertThat(PartitionKeyExposures.predictableHash().pk(HOURLY, CLIENT)).hasValueSatisfying(pk -> assertThat(pk).isEqualTo(expected));
  }

  @Test
  void aClientPredictsThePkOfItsOwnApiKey() throws Exception {
    RequestView r = RequestView.builder().header("X-Api-Key", "my-key").build();
    PartitionKey partition = PartitionKeyDerivation.apiKey().derive(r);
    MessageDigest sha = MessageDigest.getInstance("SHA-256");
    String keyHex = HexFormat.of().formatHex(sha.digest("my-key".getBytes(StandardCharsets.UTF_8)), 0, 16);
    byte[] expected = Arrays.copyOf(sha.digest(("hourly\u0000key:" + keyHex).getBytes(StandardCharsets.UTF_8)), 16);
    byte[] pk = PartitionKeyExposures.predictableHash().pk(HOURLY, partition).orElseThrow();
    assertThat(pk).isEqualTo(expected);
    assertThat(new String(pk, StandardCharsets.ISO_8859_1)).doesNotContain("my-key");
  }

  @Test
  void hmacIsKeyedAndTruncatedTo16Bytes() throws Exception {
    byte[] key = new byte[32];
    Arrays.fill(key, (byte) 7);
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(key, "HmacSHA256"));
    byte[] expected = Arrays.copyOf(mac.doFinal("hourly\u0000ip:203.0.113.7".getBytes(StandardCharsets.UTF_8)), 16);
    PartitionKeyExposure hmac = PartitionKeyExposures.hmacSha256(key);
    assertThat(hmac.pk(HOURLY, CLIENT).orElseThrow()).isEqualTo(expected);
    key[0] = 8; // the exposure copied the key
    assertThat(hmac.pk(HOURLY, CLIENT).orElseThrow()).isEqualTo(expected);
    assertThat(PartitionKeyExposures.hmacSha256(key).pk(HOURLY, CLIENT).orElseThrow()).isNotEqualTo(expected);
    assertThat(PartitionKeyExposures.hmacSha256Base64(Base64.getEncoder().encodeToString(new byte[32]))
        .pk(HOURLY, CLIENT)).isPresent();
  }

  @Test
  void shortOrUnreadableKeysAreRefusedWithoutEchoingThem() {
    assertThatThrownBy(() -> PartitionKeyExposures.hmacSha256(new byte[16]))
        .hasMessage("pk hmac key: expected 32 to 1024 bytes (at least 256 random bits), got 16 bytes");
    assertThatThrownBy(() -> PartitionKeyExposures.hmacSha256Base64("not*base64*secret"))
        .hasMessageContaining("not base64").hasMessageNotContaining("secret");
  }
}
