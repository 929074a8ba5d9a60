package dev.headroom.gateway.internal.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.gateway.internal.admin.GatewayMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link RequestDecoder}: a request without a body (RFC 9112 section 6.3: neither
 * Content-Length nor Transfer-Encoding, or a zero length) is one complete message; every other
 * request is decoded exactly as Netty's decoder decodes it.
 */
class RequestDecoderTest {

  private static RequestDecoder decoder() {
    return new RequestDecoder(4096, 8192, 65536, new GatewayMetrics(new SimpleMeterRegistry()));
  }

  private static List<Object> decode(String... pieces) {
    EmbeddedChannel ch = new EmbeddedChannel(decoder());
    for (String p : pieces) {
      ch.writeInbound(Unpooled.copiedBuffer(p, StandardCharsets.ISO_8859_1));
    }
    List<Object> out = new ArrayList<>();
    Object m;
    while ((m = ch.readInbound()) != null) {
      out.add(m);
    }
    ch.finishAndReleaseAll();
    return out;
  }

  /**
   * The idle timeout tells a connection with a request begun (408, RFC 9110 section 15.5.9) from
   * an idle one (closed): a head stalled at a line's end counts as begun, although Netty consumed
   * its lines and keeps no bytes of it.
   */
  @Test
  void aHeadStalledAtALineEndIsARequestBegunAndAWholeRequestEndsIt() {
    RequestDecoder d = decoder();
    EmbeddedChannel ch = new EmbeddedChannel(d);
    assertThat(d.holdsPartialRequest()).isFalse();
    ch.writeInbound(Unpooled.copiedBuffer("GET / HTTP/1.1\r\nHost: a\r\n", StandardCharsets.ISO_8859_1));
    assertThat(d.holdsPartialRequest()).as("whole lines, no bytes kept").isTrue();
    ch.writeInbound(Unpooled.copiedBuffer("\r\n", StandardCharsets.ISO_8859_1));
    assertThat(d.holdsPartialRequest()).as("the request was handed on whole").isFalse();
    ch.writeInbound(Unpooled.copiedBuffer("GET /next HT", StandardCharsets.ISO_8859_1));
    assertThat(d.holdsPartialRequest()).isTrue();
    ch.finishAndReleaseAll();
  }

  @Test
  void aGetIsOneCompleteMessageWithItsFields() {
    List<Object> out = decode("GET /a?b=1 HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n");
    assertThat(out).hasSize(1);
    FullHttpRequest r = (FullHttpRequest) out.get(0);
    assertThat(r.method()).isEqualTo(HttpMethod.GET);
    assertThat(r.uri()).isEqualTo("/a?b=1");
    assertThat(r.headers().get("host")).isEqualTo("x");
    assertThat(r.headers().get("accept")).isEqualTo("*/*");
    assertThat(r.content().readableBytes()).isZero();
    assertThat(r.decoderResult().isSuccess()).isTrue();
    r.release();
  }

  @Test
  void pipelinedRequestsWithoutBodiesAreOneMessageEach() {
    List<Object> out = decode("GET /1 HTTP/1.1\r\nHost: x\r\n\r\nDELETE /2 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
        + "GET /3 HTTP/1.1\r\n", "Host: x\r\n\r\n");
    assertThat(out).hasSize(3).allSatisfy(m -> assertThat(m).isInstanceOf(FullHttpRequest.class));
    assertThat(out).extracting(m -> ((HttpRequest) m).uri()).containsExactly("/1", "/2", "/3");
    out.forEach(ReferenceCountUtil::release);
  }

  @Test
  void aRequestWithABodyStaysAHeadThenItsContent() {
    List<Object> out = decode("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nab", "c");
    assertThat(out.get(0)).isInstanceOf(HttpRequest.class).isNotInstanceOf(FullHttpRequest.class);
    StringBuilder body = new StringBuilder();
    for (Object m : out.subList(1, out.size())) {
      assertThat(m).isInstanceOf(HttpContent.class);
      body.append(((HttpContent) m).content().toString(StandardCharsets.ISO_8859_1));
    }
    assertThat(body).hasToString("abc");
    assertThat(out.get(out.size() - 1)).isInstanceOf(LastHttpContent.class);
    out.forEach(ReferenceCountUtil::release);
  }

  @Test
  void aChunkedRequestStaysAHeadThenItsChunks() {
    List<Object> out = decode("POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n");
    assertThat(out.get(0)).isNotInstanceOf(FullHttpRequest.class);
    assertThat(out.get(out.size() - 1)).isInstanceOf(LastHttpContent.class);
    out.forEach(ReferenceCountUtil::release);
  }

  @Test
  void aMalformedRequestPassesAsNettyDecodedIt() {
    List<Object> out = decode("GET /a HTTP/1.1\r\nHost: x\r\nBad Name: y\r\n\r\n");
    assertThat(out).isNotEmpty();
    assertThat(((HttpRequest) out.get(0)).decoderResult().isFailure()).isTrue();
    out.forEach(ReferenceCountUtil::release);
  }

  @Test
  void aFieldSectionTooLargeFailsAsBefore() {
    List<Object> out = decode("GET /a HTTP/1.1\r\nHost: x\r\nBig: " + "y".repeat(9000) + "\r\n\r\n");
    assertThat(((HttpRequest) out.get(0)).decoderResult().isFailure()).isTrue();
    out.forEach(ReferenceCountUtil::release);
  }
}
