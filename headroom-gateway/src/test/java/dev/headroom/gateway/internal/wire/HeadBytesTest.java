package dev.headroom.gateway.internal.wire;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.AsciiString;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** {@link HeadBytes}: pieces in order, text one byte per character, any size, reusable. */
class HeadBytesTest {
  private static final UnpooledByteBufAllocator ALLOC = new UnpooledByteBufAllocator(false);

  private static String text(ByteBuf b) {
    try {
      return b.toString(StandardCharsets.ISO_8859_1);
    } finally {
      b.release();
    }
  }

  @Test
  void piecesOfEveryKindGoOutInOrder() {
    HeadBytes h = HeadBytes.begin();
    h.latin1("GET");
    h.writeByte(' ');
    h.latin1(new AsciiString("/p"));
    h.writeBytes(" HTTP/1.1".getBytes(StandardCharsets.US_ASCII));
    h.writeShort(('\r' << 8) | '\n');
    h.field(new StringBuilder("X-Name"), "caf\u00e9 \u00ff");
    h.field("x-forwarded-for: ".getBytes(StandardCharsets.US_ASCII), "127.0.0.1");
    h.writeBytes("abcdef".getBytes(StandardCharsets.US_ASCII), 2, 3);
    ByteBuf b = h.toBuffer(ALLOC, 10);
    assertThat(b.writableBytes()).isGreaterThanOrEqualTo(10);
    assertThat(text(b)).isEqualTo("GET /p HTTP/1.1\r\nX-Name: caf\u00e9 \u00ff\r\nx-forwarded-for: 127.0.0.1\r\ncde");
  }

  @Test
  void aHeadLargerThanTheScratchGrowsItAndTheNextHeadStartsEmpty() {
    String big = "v".repeat(40_000);
    HeadBytes h = HeadBytes.begin();
    h.field("X-Big", big);
    assertThat(text(h.toBuffer(ALLOC, 0))).isEqualTo("X-Big: " + big + "\r\n");
    HeadBytes again = HeadBytes.begin();
    assertThat(again.length()).isZero();
    again.latin1("small");
    assertThat(text(again.toBuffer(ALLOC, 0))).isEqualTo("small");
  }
}
