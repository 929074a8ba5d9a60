package dev.headroom.gateway.internal.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import dev.headroom.gateway.internal.wire.ResponseHead.Framing;
import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledHeapByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseDecoder;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link UpstreamResponseDecoder} reads upstream responses as RFC 9112 frames them: one head per
 * response, then body pieces that are the bytes as they arrived (chunk framing included) or the
 * data alone in dechunk mode, the last one flagged. Every test runs the decoder in an
 * {@link EmbeddedChannel} whose allocator records each buffer, and checks at the end that every
 * one of them was released.
 */
class UpstreamResponseDecoderTest {
  private static final int MAX_HEAD = 16 * 1024;
  private static final String OK_EMPTY = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";

  /** Section 6.3 framings, and the message shapes the decoder emits for them (RFC 9112). */
  @Nested
  class Bodies {
    @Test
    void fixedLengthBodyIsContentLengthBytes() {
      Run run = new Run().feed("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello").close();

      Decoded r = run.only();
      assertThat(r.head.status()).isEqualTo(200);
      assertThat(r.head.reason()).isEqualTo("OK");
      assertThat(r.head.http10()).isFalse();
      assertThat(r.head.framing()).isEqualTo(Framing.FIXED);
      assertThat(r.head.contentLength()).isEqualTo(5);
      assertThat(r.head.keepAlive()).isTrue();
      assertThat(fieldLines(r.head)).containsExactly("Content-Length: 5", "Content-Type: text/plain");
      assertThat(r.head.get("content-type")).isEqualTo("text/plain");
      assertThat(r.body()).isEqualTo("hello");
      assertThat(r.data).isEqualTo(5);
      assertThat(r.ended).isTrue();
    }

    @Test
    void fixedLengthBodyInPartsIsLastOnlyWithItsFinalByte() {
      Run run = new Run().feed("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123");
      assertThat(run.only().ended).isFalse();
      assertThat(run.decoder.idle()).isFalse();
      run.feed("456");
      assertThat(run.only().ended).isFalse();
      run.feed("789HTTP/1.1 204 No Content\r\n\r\n").close();

      assertThat(run.responses).hasSize(2);
      assertThat(run.responses.get(0).body()).isEqualTo("0123456789");
      assertThat(run.responses.get(0).pieces).isEqualTo(3);
      assertThat(run.responses.get(0).ended).isTrue();
      assertThat(run.responses.get(1).head.status()).isEqualTo(204);
      assertThat(run.decoder.idle()).isTrue();
    }

    @Test
    void chunkedBodyPiecesAreTheWireBytesAndCountTheData() {
      String body = "5\r\nhello\r\n6\r\n world\r\nA\r\n0123456789\r\n0\r\n\r\n";
      Run run = new Run().feed("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body).close();

      Decoded r = run.only();
      assertThat(r.head.framing()).isEqualTo(Framing.CHUNKED);
      assertThat(r.head.contentLength()).isEqualTo(-1);
      assertThat(r.head.keepAlive()).isTrue();
      assertThat(r.body()).isEqualTo(body);
      assertThat(r.data).isEqualTo("hello world0123456789".length());
      assertThat(r.ended).isTrue();
    }

    @Test
    void chunkExtensionsAreSkipped() {
      String body = "5;name=value\r\nhello\r\n6 ; q=\"a b\"\r\n world\r\n0;last\r\n\r\n";
      Run raw = new Run().feed(chunked(body)).close();
      assertThat(raw.only().body()).isEqualTo(body);
      assertThat(raw.only().data).isEqualTo(11);
      assertThat(raw.only().ended).isTrue();

      Run data = new Run().dechunk().feed(chunked(body)).close();
      assertThat(data.only().body()).isEqualTo("hello world");
      assertThat(data.only().ended).isTrue();
    }

    @Test
    void trailersArePartOfTheRawBodyAndTheNextResponseFollows() {
      String body = "3\r\nabc\r\n0\r\nX-Checksum: 900150983cd24fb0\r\nX-Count: 3\r\n\r\n";
      Run run = new Run().feed(chunked(body) + "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok").close();

      assertThat(run.responses).hasSize(2);
      assertThat(run.responses.get(0).body()).isEqualTo(body);
      assertThat(run.responses.get(0).data).isEqualTo(3);
      assertThat(run.responses.get(0).ended).isTrue();
      assertThat(run.responses.get(1).head.status()).isEqualTo(201);
      assertThat(run.responses.get(1).body()).isEqualTo("ok");
    }

    @Test
    void dechunkModeHandsOnTheDataAlone() {
      String body = "4\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nX-T: 1\r\n\r\n";
      Run run = new Run().dechunk().feed(chunked(body) + OK_EMPTY).close();

      assertThat(run.responses).hasSize(2);
      Decoded r = run.responses.get(0);
      assertThat(r.body()).isEqualTo("Wikipedia in\r\n\r\nchunks.");
      assertThat(r.data).isEqualTo("Wikipedia in\r\n\r\nchunks.".length());
      assertThat(r.ended).isTrue();
      assertThat(run.responses.get(1).ended).isTrue();
    }

    @Test
    void bodyWithoutLengthRunsUntilTheConnectionCloses() {
      Run run = new Run().feed("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nsome ");
      Decoded r = run.only();
      assertThat(r.head.framing()).isEqualTo(Framing.UNTIL_CLOSE);
      assertThat(r.head.keepAlive()).isFalse();
      run.feed("more HTTP/1.1 200 OK\r\n\r\n");
      assertThat(r.ended).isFalse();
      run.close();

      assertThat(run.responses).hasSize(1);
      assertThat(r.body()).isEqualTo("some more HTTP/1.1 200 OK\r\n\r\n");
      assertThat(r.ended).isTrue();
    }

    @Test
    void headResponseHasNoBodyWhateverItsFramingSays() {
      Run run = new Run();
      run.decoder.expectNoBody(true);
      run.feed("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n");
      run.feed("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
      run.decoder.expectNoBody(false);
      run.feed("HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nabc").close();

      assertThat(run.responses).hasSize(3);
      run.responses.subList(0, 2).forEach(Bodies::assertNoBody);
      assertThat(run.responses.get(0).head.get("Content-Length")).isEqualTo("5");
      assertThat(run.responses.get(2).head.status()).isEqualTo(404);
      assertThat(run.responses.get(2).body()).isEqualTo("abc");
      assertThat(run.responses.get(2).ended).isTrue();
    }

    @Test
    void noContentAndNotModifiedHaveNoBody() {
      Run run = new Run().feed("HTTP/1.1 204 No Content\r\n\r\n"
          + "HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\nETag: \"x\"\r\n\r\n"
          + "HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n"
          + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").close();

      assertThat(run.responses).extracting(r -> r.head.status()).containsExactly(204, 304, 204, 200);
      run.responses.subList(0, 3).forEach(Bodies::assertNoBody);
      assertThat(run.responses.get(3).body()).isEqualTo("ok");
    }

    @Test
    void contentLengthZeroIsAnEmptyBody() {
      Run run = new Run().feed(OK_EMPTY + OK_EMPTY).close();

      assertThat(run.responses).hasSize(2);
      run.responses.forEach(Bodies::assertNoBody);
    }

    /** A final response without a body: one empty last piece, and the connection stays usable. */
    private static void assertNoBody(Decoded r) {
      assertThat(r.head.framing()).isEqualTo(Framing.NONE);
      assertThat(r.head.contentLength()).isEqualTo(-1);
      assertThat(r.head.keepAlive()).isTrue();
      assertThat(r.pieces).isEqualTo(1);
      assertThat(r.body()).isEmpty();
      assertThat(r.ended).isTrue();
    }

    @Test
    void interimResponsesHaveNoBodyAndTheFinalOneFollows() {
      Run run = new Run().feed("HTTP/1.1 100 Continue\r\n\r\n"
          + "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
          + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").close();

      assertThat(run.responses).extracting(r -> r.head.status()).containsExactly(100, 103, 200);
      assertThat(run.responses.get(0).pieces).isZero();
      assertThat(run.responses.get(1).pieces).isZero();
      assertThat(fieldLines(run.responses.get(1).head)).containsExactly("Link: </style.css>; rel=preload");
      assertThat(run.responses.get(2).body()).isEqualTo("ok");
      assertThat(run.responses.get(2).ended).isTrue();
    }

    @Test
    void responsesBackToBackOnOneConnection() {
      Run run = new Run().feed("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"
          + "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nde\r\n0\r\n\r\n"
          + OK_EMPTY
          + "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 1\r\n\r\nf").close();

      assertThat(run.responses).extracting(r -> r.head.status()).containsExactly(200, 200, 200, 500);
      assertThat(run.responses).extracting(Decoded::body).containsExactly("abc", "2\r\nde\r\n0\r\n\r\n", "", "f");
      assertThat(run.responses).allSatisfy(r -> assertThat(r.ended).isTrue());
      assertThat(run.responses.get(3).head.reason()).isEqualTo("Internal Server Error");
    }

    @Test
    void bareLineFeedsEndLines() {
      Run run = new Run().feed("HTTP/1.1 200 OK\nContent-Length: 3\nX-A: b \n\nabc"
          + "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n3\nabc\n0\nX-T: 1\n\n").close();

      assertThat(run.responses).hasSize(2);
      assertThat(fieldLines(run.responses.get(0).head)).containsExactly("Content-Length: 3", "X-A: b");
      assertThat(run.responses.get(0).body()).isEqualTo("abc");
      assertThat(run.responses.get(1).body()).isEqualTo("3\nabc\n0\nX-T: 1\n\n");
      assertThat(run.responses.get(1).data).isEqualTo(3);
      assertThat(run.responses).allSatisfy(r -> assertThat(r.ended).isTrue());
    }

    @Test
    void emptyLinesBeforeAStatusLineAreSkipped() {
      Run run = new Run().feed("\r\n\r\n\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na\r\n");
      run.feed("\r\n").feed("HTTP/1.1 202 Accepted\r\nContent-Length: 1\r\n\r\nb").close();

      assertThat(run.responses).extracting(r -> r.head.status()).containsExactly(200, 202);
      assertThat(run.responses).extracting(Decoded::body).containsExactly("a", "b");
    }

    @Test
    void statusLineWithoutReasonPhrase() {
      Run run = new Run().feed("HTTP/1.1 200 \r\nContent-Length: 0\r\n\r\nHTTP/1.1 404\r\nContent-Length: 0\r\n\r\n")
          .close();

      assertThat(run.responses).extracting(r -> r.head.status()).containsExactly(200, 404);
      assertThat(run.responses).extracting(r -> r.head.reason()).containsExactly("", "");
    }
  }

  /** However the bytes are split into reads, the decoder emits the same responses. */
  @Nested
  class Splits {
    private static final String FIXED = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\nServer: x\r\n\r\n0123456789";
    private static final String CHUNKED = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: b\r\n\r\n"
        + "4;a=b\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nX-T: 1\r\nX-U: 2\r\n\r\n";
    private static final String BACK_TO_BACK = "HTTP/1.1 100 Continue\r\n\r\n" + CHUNKED + FIXED;
    private static final String BARE_LF = "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n3\nabc\n0\n\n"
        + "HTTP/1.0 200 OK\nContent-Length: 2\nConnection: keep-alive\n\nok";
    private static final String UNTIL_CLOSE = "HTTP/1.0 200 OK\r\nServer: x\r\n\r\nevery byte until the close";

    @Test
    void fixedLength() {
      assertSplitsAgree(FIXED, List.of("200 FIXED keep-alive [Content-Length: 10, Server: x] 10 data, ended: 0123456789"));
    }

    @Test
    void chunkedWithExtensionsAndTrailers() {
      String body = CHUNKED.substring(CHUNKED.indexOf("\r\n\r\n") + 4);
      assertSplitsAgree(CHUNKED, List.of("200 CHUNKED keep-alive [Transfer-Encoding: chunked, X-A: b] 23 data, ended: "
          + body));
    }

    @Test
    void interimThenTwoResponses() {
      assertSplitsAgree(BACK_TO_BACK, null);
      assertThat(wholeRun(BACK_TO_BACK, false)).hasSize(3);
    }

    @Test
    void bareLineFeeds() {
      assertSplitsAgree(BARE_LF, null);
      assertThat(wholeRun(BARE_LF, false)).hasSize(2);
    }

    @Test
    void untilClose() {
      assertSplitsAgree(UNTIL_CLOSE, List.of("200 UNTIL_CLOSE close [Server: x] 26 data, ended: every byte until the close"));
    }

    @Test
    void headOfExactlyTheBoundIsAcceptedHoweverItArrives() {
      // the bound counts the status line and the field lines; the blank line after them is not
      // part of it, and a read that ends before the blank line must not count against the head
      String fields = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n";
      String wire = fields + "\r\nok";
      for (String w : List.of(wire, wire.replace("\r\n", "\n"))) {
        int bound = w.indexOf("\n\n") >= 0 ? w.indexOf("\n\n") + 1 : fields.length();
        List<String> whole = run(new Run(bound), List.of(w));
        assertThat(whole).containsExactly("200 FIXED keep-alive [Content-Length: 2] 2 data, ended: ok");
        for (int at = 0; at <= w.length(); at++) {
          assertThat(run(new Run(bound), List.of(w.substring(0, at), w.substring(at)))).as("split at %d", at)
              .isEqualTo(whole);
        }
        assertThat(run(new Run(bound), bytewise(w))).as("byte at a time").isEqualTo(whole);
        assertThat(run(new Run(bound - 1), List.of(w)).get(0)).as("one byte over the bound")
            .startsWith("failed: the response head is larger than");
      }
    }

    /** Feeds the wire whole, split at every position, and one byte at a time, raw and dechunked. */
    private void assertSplitsAgree(String wire, List<String> expectedRaw) {
      for (boolean dechunk : new boolean[] {false, true}) {
        List<String> whole = wholeRun(wire, dechunk);
        if (expectedRaw != null && !dechunk) {
          assertThat(whole).isEqualTo(expectedRaw);
        }
        for (int at = 0; at <= wire.length(); at++) {
          Run run = new Run();
          run.decoder.dechunk(dechunk);
          assertThat(run(run, List.of(wire.substring(0, at), wire.substring(at))))
              .as("dechunk %s, split at %d", dechunk, at).isEqualTo(whole);
          if (!dechunk) {
            assertThat(run.wire()).as("split at %d", at).isEqualTo(wire);
          }
        }
        Run run = new Run();
        run.decoder.dechunk(dechunk);
        assertThat(run(run, bytewise(wire))).as("dechunk %s, byte at a time", dechunk).isEqualTo(whole);
      }
    }

    private List<String> wholeRun(String wire, boolean dechunk) {
      Run run = new Run();
      run.decoder.dechunk(dechunk);
      return run(run, List.of(wire));
    }

    private List<String> run(Run run, List<String> reads) {
      reads.forEach(run::feed);
      run.close();
      return run.responses.stream().map(Decoded::describe).toList();
    }

    private List<String> bytewise(String wire) {
      return wire.chars().mapToObj(c -> String.valueOf((char) c)).toList();
    }
  }

  /**
   * An upgrade the request asked for (RFC 9110 section 7.8): after a 101 the connection is no longer
   * HTTP, so the decoder hands on the head and decodes nothing more; the bytes after the head stay
   * in its buffer until it is removed, when Netty passes them on as they are (to the tunnel's end).
   */
  @Nested
  class Upgrades {
    @Test
    void a101AskedForEndsDecodingAndTheBytesAfterItAreHandedOnWhenTheDecoderIsRemoved() {
      Run run = new Run();
      run.decoder.expectUpgrade(true);
      run.feed("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n\u0081\u0002hi");
      assertThat(run.only().head.status()).isEqualTo(101);
      assertThat(run.only().head.get("upgrade")).isEqualTo("websocket");
      assertThat(run.decoder.idle()).isFalse(); // never back to a pool
      run.feed("HTTP/1.1 200 OK\r\n\r\n"); // not HTTP any more: not decoded either
      assertThat(run.responses).hasSize(1);
      run.channel.pipeline().remove(run.decoder);
      ByteBuf rest = run.channel.readInbound();
      try {
        assertThat(rest.toString(StandardCharsets.ISO_8859_1)).isEqualTo("\u0081\u0002hiHTTP/1.1 200 OK\r\n\r\n");
      } finally {
        rest.release();
      }
      run.close();
    }

    @Test
    void withAnUpgradeAskedForAnyOtherAnswerIsAnOrdinaryResponse() {
      Run run = new Run();
      run.decoder.expectUpgrade(true);
      run.feed("HTTP/1.1 400 Bad Request\r\nContent-Length: 2\r\n\r\nno").close();
      assertThat(run.only().head.status()).isEqualTo(400);
      assertThat(run.only().body()).isEqualTo("no");
      assertThat(run.decoder.idle()).isTrue();
    }
  }

  /** What the class comment says is refused: a failed head that says why, then nothing at all. */
  @Nested
  class Refusals {
    @Test
    void statusLineThatIsNotHttp11() {
      for (String line : List.of("HTTP/2 200 OK", "HTTP/1.2 200 OK", "ICY 200 OK", "HTTP/1.1 20 OK", "HTTP/1.1 2000 OK",
          "HTTP/1.1 2x0 OK", "http/1.1 200 OK", "HTTP/1.1  200 OK")) {
        assertRefused(line + "\r\nContent-Length: 0\r\n\r\n", "the status line is not HTTP/1.1: \"" + line + "\"");
      }
    }

    @Test
    void statusOutside100To599() {
      assertRefused("HTTP/1.1 099 Low\r\n\r\n", "the status code 99 is not from 100 to 599");
      assertRefused("HTTP/1.1 600 High\r\n\r\n", "the status code 600 is not from 100 to 599");
      assertRefused("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n",
          "the upstream switched protocols (101) without being asked to");
    }

    @Test
    void controlCharacterInReasonPhrase() {
      assertRefused("HTTP/1.1 200 O\u0000K\r\n\r\n", "the reason phrase has a control character");
    }

    @Test
    void headOverTheBound() {
      String head = "HTTP/1.1 200 OK\r\nX-Padding: " + "p".repeat(100) + "\r\n\r\n";
      assertRefused(new Run(64), head, "the response head is larger than 64 bytes");
      // before the head is complete too: the bound holds while the head is still arriving
      assertRefused(new Run(64), head.substring(0, 80), "the response head is larger than 64 bytes");
    }

    /** Field lines refused (RFC 9112 section 5, RFC 9110 section 5.5), and what is said of each. */
    static Stream<Arguments> badFieldLines() {
      return Stream.of(
          arguments("NoColonHere", "a field line has no colon"),
          arguments(": value", "a field line has an empty name"),
          // whitespace before the colon (RFC 9112 section 5.1)
          arguments("Content-Length : 0", "whitespace between the field name Content-Length and its colon (RFC 9112 section 5.1)"),
          arguments("X-A\t: b", "whitespace between the field name X-A and its colon (RFC 9112 section 5.1)"),
          arguments("Bad Line", "a field line has no colon after its name Bad"),
          arguments("X(A): b", "a field name has the character 0x28, which is not a token character"),
          arguments("X-Value: a\u0000b", "the value of X-Value has a control character"),
          arguments("X-Value: a\u0001b", "the value of X-Value has a control character"),
          arguments("X-Value: a\u007fb", "the value of X-Value has a control character"),
          arguments("X-Value: a\rb", "the value of X-Value has a control character"),
          arguments("X-Value: a\r", "the value of X-Value has a control character"),
          arguments("X-A: first\r\n  second", "a field line uses obsolete line folding"),
          arguments("X-A: first\r\n\tsecond", "a field line uses obsolete line folding"));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("badFieldLines")
    void badFieldLine(String line, String why) {
      assertRefused(field(line), why);
    }

    @Test
    void differingContentLengths() {
      assertRefused(field("Content-Length: 5\r\nContent-Length: 6"), "Content-Length 6 differs from an earlier Content-Length 5");
      assertRefused(field("Content-Length: 5\r\nContent-Length: 6, 6"), "Content-Length 6 differs from an earlier Content-Length 5");
      assertRefused(field("Content-Length: 5, 6"), "Content-Length \"5, 6\" is not one non-negative integer");
      for (String value : List.of("-1", "+5", "5x", "0x10", "", "1234567890123456789", "5,,5")) {
        assertRefused(field("Content-Length: " + value),
            "Content-Length \"" + value + "\" is not one non-negative integer");
      }
    }

    @Test
    void identicalContentLengthsAreOneValue() {
      Run run = new Run().feed("HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\nContent-Length: 5\r\n\r\nhelloHTTP/1.1 204 -\r\n\r\n")
          .close();

      assertThat(run.responses).hasSize(2);
      assertThat(run.responses.get(0).head.framing()).isEqualTo(Framing.FIXED);
      assertThat(run.responses.get(0).head.contentLength()).isEqualTo(5);
      assertThat(run.responses.get(0).body()).isEqualTo("hello");
      assertThat(run.responses.get(1).head.status()).isEqualTo(204);
    }

    @Test
    void invalidChunkSizeLine() {
      for (String line : List.of("zz", "", " 5", "5 x", "-5", "0x5", "1234567890abcdef", "5;a\u0001b", "5\r ")) {
        assertRefusedInBody(line + "\r\nhello\r\n0\r\n\r\n", "a chunk-size line is not a hexadecimal size");
      }
      assertRefusedInBody("5;" + "e".repeat(5000) + "\r\n", "a chunk-size line is longer than 4096 bytes");
    }

    @Test
    void chunkDataLongerThanItsSize() {
      assertRefusedInBody("3\r\nabcd\r\n0\r\n\r\n", "chunk data is longer than its chunk size");
      assertRefusedInBody("3\r\nabc\rd\n0\r\n\r\n", "chunk data is longer than its chunk size");
    }

    @Test
    void trailerSectionOverTheBound() {
      String trailers = "0\r\nX-T: " + "t".repeat(40) + "\r\nX-U: " + "u".repeat(40) + "\r\n\r\n";
      String wire = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + trailers;
      assertRefused(new Run(64), wire, 1, "the trailer section is larger than 64 bytes");
      assertRefused(new Run(64).dechunk(), wire, 1, "the trailer section is larger than 64 bytes");
    }

    @Test
    void trailerLineThatIsNotAField() {
      assertRefusedInBody("0\r\nno colon\r\n\r\n", "a trailer field line is not name: value");
      assertRefusedInBody("0\r\nX-T: 1\r\n folded\r\n\r\n", "a trailer field line is not name: value");
    }

    private String field(String line) {
      return "HTTP/1.1 200 OK\r\nServer: x\r\n" + line + "\r\nContent-Length: 0\r\n\r\n";
    }

    private void assertRefusedInBody(String body, String why) {
      assertRefused(new Run(), chunked(body), 1, why);
      assertRefused(new Run().dechunk(), chunked(body), 1, why);
    }

    private void assertRefused(String wire, String why) {
      assertRefused(new Run(), wire, why);
    }

    private void assertRefused(Run run, String wire, String why) {
      assertRefused(run, wire, 0, why);
    }

    /** After {@code heads} good heads, a failed one that says why; then later bytes yield nothing. */
    private void assertRefused(Run run, String wire, int heads, String why) {
      run.feed(wire);
      assertThat(run.responses).as(wire).hasSize(heads + 1);
      Decoded failed = run.responses.get(heads);
      assertThat(failed.head.failure()).as(wire).isEqualTo(why);
      assertThat(failed.head.keepAlive()).isFalse();
      if (heads > 0) {
        assertThat(run.responses.get(heads - 1).ended).isFalse();
      }
      run.feed(OK_EMPTY).feed("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").close();
      assertThat(run.responses).as("after the failure").hasSize(heads + 1);
      assertThat(failed.pieces).isZero();
    }
  }

  /** Framing and connection rules: RFC 9112 sections 6.1, 6.3 and 9.3, RFC 9110 section 7.6.1. */
  @Nested
  class Framings {
    @Test
    void transferEncodingEndingInChunkedIsChunked() {
      for (String te : List.of("chunked", "Chunked", "gzip, chunked", "gzip,chunked", "gzip\r\nTransfer-Encoding: chunked",
          "chunked\r\nTransfer-Encoding:")) {
        Decoded r = single("HTTP/1.1 200 OK\r\nTransfer-Encoding: " + te + "\r\n\r\n1\r\na\r\n0\r\n\r\n");
        assertThat(r.head.framing()).as(te).isEqualTo(Framing.CHUNKED);
        assertThat(r.head.keepAlive()).as(te).isTrue();
        assertThat(r.ended).as(te).isTrue();
      }
    }

    @Test
    void transferEncodingNotEndingInChunkedRunsUntilClose() {
      for (String te : List.of("chunked, gzip", "gzip", "chunked\r\nTransfer-Encoding: gzip", "chunked;q=1")) {
        Decoded r = single("HTTP/1.1 200 OK\r\nTransfer-Encoding: " + te + "\r\nContent-Length: 1\r\n\r\n1\r\na\r\n0\r\n\r\n");
        assertThat(r.head.framing()).as(te).isEqualTo(Framing.UNTIL_CLOSE);
        assertThat(r.head.keepAlive()).as(te).isFalse();
        assertThat(r.body()).as(te).isEqualTo("1\r\na\r\n0\r\n\r\n");
        assertThat(r.ended).as(te).isTrue();
      }
    }

    @Test
    void contentLengthBesideTransferEncodingIsIgnoredAndNotForwarded() {
      Decoded r = single("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\nContent-Type: x\r\n\r\n"
          + "5\r\nhello\r\n0\r\n\r\n");
      assertThat(r.head.framing()).isEqualTo(Framing.CHUNKED);
      assertThat(r.head.contentLength()).isEqualTo(-1);
      assertThat(hopByHop(r.head)).containsExactly("Content-Length", "Transfer-Encoding");
      assertThat(r.body()).isEqualTo("5\r\nhello\r\n0\r\n\r\n");

      Decoded untilClose = single("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\ncontent-length: 3\r\n\r\nhello");
      assertThat(untilClose.head.framing()).isEqualTo(Framing.UNTIL_CLOSE);
      assertThat(hopByHop(untilClose.head)).containsExactly("Transfer-Encoding", "content-length");
      assertThat(untilClose.body()).isEqualTo("hello");
    }

    @Test
    void hopByHopFieldsAndTheFieldsConnectionNames() {
      Decoded r = single("HTTP/1.1 200 OK\r\n"
          + "Connection: X-Secret, upgrade\r\n"
          + "x-secret: 1\r\n"
          + "X-Public: 2\r\n"
          + "Keep-Alive: timeout=5\r\n"
          + "Proxy-Connection: keep-alive\r\n"
          + "TE: trailers\r\n"
          + "Upgrade: h2c\r\n"
          + "Proxy-Authenticate: Basic\r\n"
          + "proxy-authorization: Basic x\r\n"
          + "Content-Length: 0\r\n"
          + "Connection: x-other\r\n"
          + "X-Other: 3\r\n"
          + "Trailer: X-T\r\n\r\n");
      assertThat(hopByHop(r.head)).containsExactly("Connection", "x-secret", "Keep-Alive", "Proxy-Connection", "TE",
          "Upgrade", "Proxy-Authenticate", "proxy-authorization", "Connection", "X-Other");
      assertThat(r.head.keepAlive()).isTrue();
    }

    @Test
    void keepAliveDecision() {
      Map<String, Boolean> cases = Map.ofEntries(
          Map.entry("HTTP/1.1 200 OK\r\nContent-Length: 0", true),
          Map.entry("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close", false),
          Map.entry("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: Close", false),
          Map.entry("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: upgrade, CLOSE", false),
          Map.entry("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\nConnection: close", false),
          Map.entry("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: closed", true),
          Map.entry("HTTP/1.0 200 OK\r\nContent-Length: 0", false),
          Map.entry("HTTP/1.0 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive", true),
          Map.entry("HTTP/1.0 200 OK\r\nContent-Length: 0\r\nConnection: Keep-Alive", true),
          Map.entry("HTTP/1.0 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive, close", false),
          Map.entry("HTTP/1.0 204 No Content\r\nConnection: keep-alive", true),
          // Transfer-Encoding in HTTP/1.0 is faulty framing: the connection closes after it
          Map.entry("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive", false),
          // a body until close is never followed by another response
          Map.entry("HTTP/1.1 200 OK", false),
          Map.entry("HTTP/1.0 200 OK\r\nConnection: keep-alive", false),
          Map.entry("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip", false));
      cases.forEach((head, keepAlive) -> {
        Run run = new Run().feed(head + "\r\n\r\n").close();
        assertThat(run.responses.get(0).head.keepAlive()).as(head).isEqualTo(keepAlive);
        assertThat(run.responses.get(0).head.http10()).as(head).isEqualTo(head.startsWith("HTTP/1.0"));
      });
    }

    private Decoded single(String wire) {
      return new Run().feed(wire).close().only();
    }

    private List<String> hopByHop(ResponseHead head) {
      List<String> names = new ArrayList<>();
      for (int i = 0; i < head.size(); i++) {
        if (head.hopByHop(i)) {
          names.add(head.name(i));
        }
      }
      return names;
    }
  }

  /** A body cut short by the close is no complete response (RFC 9112 section 8). */
  @Nested
  class CutShort {
    @Test
    void fixedLengthBodyCutShortHasNoLastPiece() {
      Run run = new Run().feed("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc").close();
      assertThat(run.only().body()).isEqualTo("abc");
      assertThat(run.only().ended).isFalse();
    }

    @Test
    void chunkedBodyCutShortHasNoLastPiece() {
      for (String cut : List.of("", "5", "5\r", "5\r\n", "5\r\nhel", "5\r\nhello", "5\r\nhello\r", "5\r\nhello\r\n0\r\n",
          "5\r\nhello\r\n0\r\nX-T: 1\r\n", "5\r\nhello\r\n0\r\n\r")) {
        for (boolean dechunk : new boolean[] {false, true}) {
          Run run = new Run();
          run.decoder.dechunk(dechunk);
          run.feed(chunked(cut)).close();
          assertThat(run.responses).as(cut).hasSize(1);
          assertThat(run.only().ended).as(cut).isFalse();
        }
      }
    }

    @Test
    void headCutShortYieldsNothing() {
      Run run = new Run().feed("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n").close();
      assertThat(run.responses).isEmpty();
    }
  }

  /**
   * Differential: randomly generated valid responses read by this decoder and by Netty's
   * {@link HttpResponseDecoder} give the same statuses, fields in order, body data and keep-alive
   * decisions; and the heads and raw pieces, concatenated, are the wire bytes exactly.
   */
  @Nested
  class AgainstNetty {
    private static final int[] STATUSES = {200, 200, 200, 201, 202, 203, 204, 206, 301, 302, 304, 307, 400, 401, 403, 404,
        409, 429, 500, 502, 503};
    private static final String TCHAR = "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

    @Test
    void randomResponsesDecodeAsNettyDecodesThem() {
      Random random = new Random(0x5EED_2024L);
      for (int n = 0; n < 400; n++) {
        Wire wire = new Wire();
        int responses = 1 + random.nextInt(3);
        for (int i = 0; i < responses; i++) {
          response(random, wire, i == responses - 1);
        }
        byte[] bytes = wire.out.toByteArray();
        List<byte[]> reads = split(random, bytes);
        String what = "connection " + n + ":\n" + new String(bytes, StandardCharsets.ISO_8859_1);

        List<Seen> netty = netty(reads);
        if (wire.untilClose) {
          Seen last = netty.get(netty.size() - 1);
          netty.set(netty.size() - 1, new Seen(last.status, last.reason, last.fields, false, last.body, last.ended));
        }
        Run data = new Run().dechunk();
        reads.forEach(data::feed);
        data.close();
        assertThat(data.responses.stream().map(Seen::of).toList()).as(what).isEqualTo(netty);

        Run raw = new Run();
        reads.forEach(raw::feed);
        raw.close();
        assertThat(raw.wire()).as(what).isEqualTo(new String(bytes, StandardCharsets.ISO_8859_1));
        assertThat(raw.responses.stream().map(r -> r.data).toList()).as(what)
            .isEqualTo(netty.stream().map(s -> (long) s.body.length()).toList());
        assertThat(raw.responses.stream().map(r -> r.ended).toList()).as(what)
            .isEqualTo(netty.stream().map(Seen::ended).toList());
      }
    }

    private List<Seen> netty(List<byte[]> reads) {
      EmbeddedChannel channel = new EmbeddedChannel(new HttpResponseDecoder());
      for (byte[] read : reads) {
        channel.writeInbound(channel.alloc().buffer(read.length).writeBytes(read));
      }
      channel.finish();
      List<Seen> seen = new ArrayList<>();
      Seen.Builder current = null;
      for (Object m; (m = channel.readInbound()) != null; ) {
        try {
          assertThat(((HttpObject) m).decoderResult().isSuccess()).as("Netty decodes %s", m).isTrue();
          if (m instanceof HttpResponse r) {
            if (current != null) {
              seen.add(current.build());
            }
            List<String> fields = new ArrayList<>();
            r.headers().iteratorAsString().forEachRemaining(e -> fields.add(e.getKey() + ": " + e.getValue()));
            current = new Seen.Builder(r.status().code(), r.status().reasonPhrase(), fields, HttpUtil.isKeepAlive(r));
          }
          if (m instanceof HttpContent c) {
            byte[] b = new byte[c.content().readableBytes()];
            c.content().getBytes(c.content().readerIndex(), b);
            current.body.writeBytes(b);
            current.ended |= c instanceof LastHttpContent;
          }
        } finally {
          ReferenceCountUtil.release(m);
        }
      }
      if (current != null) {
        seen.add(current.build());
      }
      return seen;
    }

    /** Appends one response, maybe after an interim one; a body until close only as the last. */
    private void response(Random random, Wire wire, boolean last) {
      boolean http10 = random.nextInt(5) == 0;
      String version = http10 ? "HTTP/1.0 " : "HTTP/1.1 ";
      if (!http10 && random.nextInt(8) == 0) {
        boolean hints = random.nextBoolean();
        wire.ascii(hints ? "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n" : "HTTP/1.1 100 Continue\r\n\r\n");
      }
      int status = STATUSES[random.nextInt(STATUSES.length)];
      wire.ascii(version + status + statusTail(random) + "\r\n");
      List<String> fields = new ArrayList<>();
      for (int i = random.nextInt(9); i > 0; i--) {
        fields.add("X-" + token(random, 1 + random.nextInt(12)) + ":" + ows(random) + value(random) + ows(random));
      }
      if (random.nextInt(3) == 0) {
        String[] connection = {"close", "keep-alive", "Keep-Alive", "close, X-Foo", "X-Foo", "upgrade", "TE, close", "CLOSE"};
        fields.add(random.nextInt(fields.size() + 1), "Connection: " + connection[random.nextInt(connection.length)]);
      }
      byte[] body = new byte[bodyLength(random)];
      random.nextBytes(body);
      byte[] framed;
      boolean untilClose = false;
      if (status == 204 || status == 304) {
        framed = new byte[0];
        if (status == 304 && random.nextBoolean()) {
          fields.add(random.nextInt(fields.size() + 1), "Content-Length: " + body.length);
        }
      } else if (last && random.nextInt(10) == 0) {
        framed = body;
        untilClose = true;
      } else if (http10 || random.nextBoolean()) {
        framed = body;
        fields.add(random.nextInt(fields.size() + 1), caseOf(random, "Content-Length") + ": " + body.length);
      } else {
        framed = chunk(random, body);
        fields.add(random.nextInt(fields.size() + 1), caseOf(random, "Transfer-Encoding") + ": "
            + (random.nextBoolean() ? "chunked" : "Chunked"));
      }
      for (String f : fields) {
        wire.ascii(f + "\r\n");
      }
      wire.ascii("\r\n");
      wire.out.writeBytes(framed);
      wire.untilClose = untilClose;
    }

    private String statusTail(Random random) {
      return switch (random.nextInt(12)) {
        case 0 -> "";
        case 1 -> " ";
        default -> " " + String.join(" ", words(random));
      };
    }

    private List<String> words(Random random) {
      List<String> words = new ArrayList<>();
      for (int i = 1 + random.nextInt(3); i > 0; i--) {
        words.add(visible(random, 1 + random.nextInt(8)));
      }
      return words;
    }

    private int bodyLength(Random random) {
      return switch (random.nextInt(10)) {
        case 0 -> 0;
        case 1 -> random.nextInt(20_000);
        default -> 1 + random.nextInt(300);
      };
    }

    private byte[] chunk(Random random, byte[] body) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      int at = 0;
      while (at < body.length) {
        int n = Math.min(body.length - at, 1 + random.nextInt(random.nextBoolean() ? 16 : 9000));
        String size = Integer.toHexString(n);
        size = random.nextBoolean() ? size.toUpperCase(Locale.ROOT) : size;
        size = random.nextInt(8) == 0 ? "00" + size : size;
        out.writeBytes(ascii(size + extension(random) + "\r\n"));
        out.write(body, at, n);
        out.writeBytes(ascii("\r\n"));
        at += n;
      }
      out.writeBytes(ascii("0" + extension(random) + "\r\n"));
      for (int i = random.nextInt(4) == 0 ? 1 + random.nextInt(3) : 0; i > 0; i--) {
        out.writeBytes(ascii("X-T" + token(random, 1 + random.nextInt(6)) + ":" + ows(random) + value(random) + "\r\n"));
      }
      out.writeBytes(ascii("\r\n"));
      return out.toByteArray();
    }

    private String extension(Random random) {
      return switch (random.nextInt(6)) {
        case 0 -> ";" + token(random, 3);
        case 1 -> ";" + token(random, 3) + "=" + token(random, 4);
        case 2 -> ";" + token(random, 3) + "=\"" + String.join(" ", words(random)).replace("\"", "").replace("\\", "") + "\"";
        default -> "";
      };
    }

    /** A field value: visible characters, obs-text now and then, single spaces and tabs inside. */
    private String value(Random random) {
      StringBuilder sb = new StringBuilder();
      for (int i = random.nextInt(30); i > 0; i--) {
        sb.append(random.nextInt(20) == 0 ? (char) (0x80 + random.nextInt(0x80)) : (char) (0x21 + random.nextInt(0x5e)));
        if (i > 1 && random.nextInt(6) == 0) {
          sb.append(random.nextInt(4) == 0 ? '\t' : ' ');
        }
      }
      return sb.toString();
    }

    private String ows(Random random) {
      String[] ows = {"", " ", " ", " ", "  ", "\t", " \t"};
      return ows[random.nextInt(ows.length)];
    }

    private String token(Random random, int length) {
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < length; i++) {
        sb.append(TCHAR.charAt(random.nextInt(TCHAR.length())));
      }
      return sb.toString();
    }

    private String visible(Random random, int length) {
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < length; i++) {
        sb.append((char) (0x21 + random.nextInt(0x5e)));
      }
      return sb.toString();
    }

    private String caseOf(Random random, String name) {
      return switch (random.nextInt(4)) {
        case 0 -> name.toLowerCase(Locale.ROOT);
        case 1 -> name.toUpperCase(Locale.ROOT);
        default -> name;
      };
    }

    private List<byte[]> split(Random random, byte[] bytes) {
      int[] cuts = new int[random.nextInt(4)];
      for (int i = 0; i < cuts.length; i++) {
        cuts[i] = random.nextInt(bytes.length + 1);
      }
      Arrays.sort(cuts);
      List<byte[]> reads = new ArrayList<>();
      int from = 0;
      for (int cut : cuts) {
        reads.add(Arrays.copyOfRange(bytes, from, cut));
        from = cut;
      }
      reads.add(Arrays.copyOfRange(bytes, from, bytes.length));
      return reads;
    }
  }

  // ---- harness ----

  /** The bytes of a generated connection, and whether its last body runs until the close. */
  private static final class Wire {
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    boolean untilClose;

    void ascii(String s) {
      out.writeBytes(UpstreamResponseDecoderTest.ascii(s));
    }
  }

  /** A response as either decoder saw it, the body as data alone, in a form both can produce. */
  private record Seen(int status, String reason, List<String> fields, boolean keepAlive, String body, boolean ended) {
    static Seen of(Decoded d) {
      assertThat(d.head.failure()).isNull();
      return new Seen(d.head.status(), d.head.reason(), fieldLines(d.head), d.head.keepAlive(), d.body(),
          d.ended && d.head.status() >= 200);
    }

    static final class Builder {
      final int status;
      final String reason;
      final List<String> fields;
      final boolean keepAlive;
      final ByteArrayOutputStream body = new ByteArrayOutputStream();
      boolean ended;

      Builder(int status, String reason, List<String> fields, boolean keepAlive) {
        this.status = status;
        this.reason = reason;
        this.fields = fields;
        this.keepAlive = keepAlive;
      }

      Seen build() {
        return new Seen(status, reason, fields, keepAlive, body.toString(StandardCharsets.ISO_8859_1),
            ended && status >= 200);
      }
    }
  }

  /** One response as the decoder emitted it: its head, and its body pieces concatenated. */
  private static final class Decoded {
    final ResponseHead head;
    final ByteArrayOutputStream body = new ByteArrayOutputStream();
    long data;
    int pieces;
    boolean ended;

    Decoded(ResponseHead head) {
      this.head = head;
    }

    void append(ResponseBody piece) {
      assertThat(ended).as("a body piece after the last one").isFalse();
      assertThat(head.failure()).as("a body piece after a failure").isNull();
      assertThat(head.status()).as("a body piece of an interim response").isGreaterThanOrEqualTo(200);
      ByteBuf bytes = piece.bytes();
      byte[] b = new byte[bytes.readableBytes()];
      bytes.getBytes(bytes.readerIndex(), b);
      body.writeBytes(b);
      data += piece.data();
      pieces++;
      ended = piece.last();
    }

    String body() {
      return body.toString(StandardCharsets.ISO_8859_1);
    }

    String describe() {
      if (head.failure() != null) {
        return "failed: " + head.failure();
      }
      return head.status() + " " + head.framing() + (head.keepAlive() ? " keep-alive " : " close ") + fieldLines(head) + " "
          + data + " data, " + (ended ? "ended: " : "open: ") + body();
    }
  }

  /**
   * The decoder in an embedded channel. Collects what it emits into {@link #responses}, releasing
   * each message as it is read; {@link #close()} closes the channel and checks that every buffer
   * the channel allocated was released.
   */
  private static final class Run {
    final RecordingAllocator alloc = new RecordingAllocator();
    final UpstreamResponseDecoder decoder;
    final EmbeddedChannel channel = new EmbeddedChannel();
    final List<Decoded> responses = new ArrayList<>();

    Run() {
      this(MAX_HEAD);
    }

    Run(int maxHead) {
      decoder = new UpstreamResponseDecoder(maxHead);
      channel.config().setAllocator(alloc);
      channel.pipeline().addLast(decoder);
    }

    Run dechunk() {
      decoder.dechunk(true);
      return this;
    }

    Run feed(String s) {
      return feed(ascii(s));
    }

    Run feed(byte[] bytes) {
      channel.writeInbound(alloc.buffer(bytes.length).writeBytes(bytes));
      drain();
      return this;
    }

    Run close() {
      channel.finish();
      drain();
      alloc.assertAllReleased();
      return this;
    }

    Decoded only() {
      assertThat(responses).hasSize(1);
      return responses.get(0);
    }

    /** Each head's bytes followed by its body pieces: the wire, less empty lines between responses. */
    String wire() {
      StringBuilder sb = new StringBuilder();
      for (Decoded d : responses) {
        sb.append(new String(d.head.raw(), StandardCharsets.ISO_8859_1)).append(d.body());
      }
      return sb.toString();
    }

    private void drain() {
      for (Object m; (m = channel.readInbound()) != null; ) {
        if (m instanceof ResponseHead h) {
          responses.add(new Decoded(h));
        } else if (m instanceof ResponseBody piece) {
          try {
            assertThat(responses).as("a body piece before any head").isNotEmpty();
            responses.get(responses.size() - 1).append(piece);
          } finally {
            piece.release();
          }
        } else {
          fail("unexpected message %s", m);
        }
      }
    }
  }

  /** Unpooled heap buffers, each one remembered so that a test can check all were released. */
  private static final class RecordingAllocator extends AbstractByteBufAllocator {
    private final List<ByteBuf> allocated = new ArrayList<>();

    RecordingAllocator() {
      super(false);
    }

    @Override
    protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
      ByteBuf b = new UnpooledHeapByteBuf(this, initialCapacity, maxCapacity);
      allocated.add(b);
      return b;
    }

    @Override
    protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
      return newHeapBuffer(initialCapacity, maxCapacity);
    }

    @Override
    public boolean isDirectBufferPooled() {
      return false;
    }

    void assertAllReleased() {
      assertThat(allocated).as("buffers still referenced").allSatisfy(b -> assertThat(b.refCnt()).isZero());
    }
  }

  private static List<String> fieldLines(ResponseHead head) {
    return head.fieldList().stream().map(f -> f[0] + ": " + f[1]).toList();
  }

  private static String chunked(String body) {
    return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body;
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.ISO_8859_1);
  }
}
