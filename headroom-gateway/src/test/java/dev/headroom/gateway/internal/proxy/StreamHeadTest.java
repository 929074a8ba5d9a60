package dev.headroom.gateway.internal.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.codec.http2.Http2Headers;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A HEADERS frame's fields as {@link StreamHead} builds them (RFC 9113 sections 8.2.1, 8.2.2, 8.2.3):
 * the names Netty's conversion treats apart still reach it, whatever their case, and every other field
 * is added as it is, in lower case.
 */
class StreamHeadTest {

  @ParameterizedTest
  @ValueSource(strings = {"Connection", "keep-alive", "Proxy-Connection", "TRANSFER-ENCODING", "Host", "Upgrade",
      "x-http2-stream-id", "X-Http2-Scheme", "x-http2-path"})
  void connectionSpecificAndNettysOwnFieldsAreDropped(String name) {
    Http2Headers h = StreamHead.of(200, 2);
    StreamHead.add(h, name, "v");
    byte[] raw = (name + ": v").getBytes(StandardCharsets.US_ASCII);
    StreamHead.add(h, raw, 0, name.length(), name.length() + 2, raw.length);

    assertThat(h.names()).extracting(CharSequence::toString).containsExactly(":status");
  }

  @Test
  void teIsKeptOnlyAsTrailersAndACookieIsSplitIntoCrumbs() {
    Http2Headers h = StreamHead.of(200, 4);
    StreamHead.add(h, "TE", "trailers");
    StreamHead.add(h, "te", "gzip");
    StreamHead.add(h, "Cookie", "a=1; b=2");

    assertThat(h.getAll("te")).extracting(CharSequence::toString).containsExactly("trailers");
    assertThat(h.getAll("cookie")).extracting(CharSequence::toString).containsExactly("a=1", "b=2");
  }

  @Test
  void otherFieldsAreAddedAsTheyAreInLowerCase() {
    Http2Headers h = StreamHead.of(429, 6);
    byte[] raw = "Content-Type: application/json".getBytes(StandardCharsets.US_ASCII);
    StreamHead.add(h, raw, 0, 12, 14, raw.length);
    StreamHead.add(h, "Content-Length", "17");
    StreamHead.add(h, "RateLimit-Policy", "\"open\";q=10;w=1");
    StreamHead.add(h, "Set-Cookie", "a=1; Path=/");
    StreamHead.add(h, "X-Custom", "keep");

    assertThat(h.status().toString()).isEqualTo("429");
    assertThat(h.get("content-type").toString()).isEqualTo("application/json");
    assertThat(h.get("content-length").toString()).isEqualTo("17");
    assertThat(h.get("ratelimit-policy").toString()).isEqualTo("\"open\";q=10;w=1");
    assertThat(h.get("set-cookie").toString()).isEqualTo("a=1; Path=/");
    assertThat(h.get("x-custom").toString()).isEqualTo("keep");
  }
}
