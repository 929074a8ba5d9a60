package dev.headroom.gateway.internal.proxy;

import dev.headroom.gateway.internal.wire.HeadBytes;
import dev.headroom.gateway.internal.wire.HopByHop;
import dev.headroom.gateway.internal.wire.ResponseBody;
import dev.headroom.gateway.internal.wire.ResponseHead;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import java.nio.charset.StandardCharsets;

/**
 * The raw path: a response forwarded as received. The head's kept field lines are copied as
 * byte ranges of the upstream's head (hop-by-hop ones dropped, as {@link ResponseHead#hopByHop}
 * says through {@link HopByHop}), this gateway's RateLimit fields and the connection's fate
 * added; the body's bytes, chunk framing included, are written past the HTTP encoder. The head
 * waits for the body's first piece, which usually came in the same read: a small one joins it in
 * one buffer, so that a small response is one write.
 */
final class RawRelay implements ResponseRelay {
  /** Body pieces up to this size are copied into the head's buffer rather than written apart. */
  private static final int JOIN_BYTES = 4096;
  private static final int CRLF = ('\r' << 8) | '\n';
  private static final byte[] CONNECTION_UPGRADE = "connection: upgrade\r\n".getBytes(StandardCharsets.US_ASCII);

  private final ClientSink client;
  private final ChannelHandlerContext out;
  /** The head not yet written, waiting for the first body piece (or the read's end). */
  private ByteBuf pendingHead;

  RawRelay(ClientSink client, ResponseHead h) {
    this.client = client;
    this.out = client.bytesOut();
    this.pendingHead = head(h, client, client.keepAlive(), client.http10(), null, out.alloc());
  }

  /**
   * The client's response head from the upstream's: its fields minus hop-by-hop ones, plus ours.
   * With {@code upgrade} (a 101 the client asked for, RFC 9110 section 15.2.2) the connection's fate
   * is {@code Connection: upgrade} and {@code Upgrade: upgrade}, the protocol the connection now
   * speaks; without it (null), close or keep-alive as {@code keepAlive} says.
   */
  static ByteBuf head(ResponseHead h, ClientSink client, boolean keepAlive,
      boolean http10Client, String upgrade, ByteBufAllocator alloc) {
    byte[] raw = h.raw();
    HeadBytes b = HeadBytes.begin();
    // Lines that go out exactly as they came (an HTTP/1.1 status line with its reason, field
    // lines ending in CRLF) are copied in runs, one copy per run of kept lines, rather than
    // one per line; a hop-by-hop line ends a run.
    int runStart = -1;
    int runEnd = -1;
    int re = h.reasonEnd();
    if (raw[7] == '1' && h.reasonStart() == 13 && re + 1 < raw.length && raw[re] == '\r' && raw[re + 1] == '\n') {
      runStart = 0;
      runEnd = re + 2;
    } else {
      b.writeBytes(HeadBytes.HTTP_1_1_SP);
      b.writeBytes(raw, 9, 3); // the status code, validated by the decoder
      b.writeByte(' ');
      b.writeBytes(raw, h.reasonStart(), re - h.reasonStart());
      b.writeShort(CRLF);
    }
    boolean chunked = h.framing() == ResponseHead.Framing.CHUNKED;
    for (int i = 0; i < h.size(); i++) {
      // Transfer-Encoding stays when the chunked framing is forwarded as it is
      if (h.hopByHop(i) && !(chunked && h.nameIs(i, ResponseHead.TRANSFER_ENCODING))) {
        if (runStart >= 0) {
          b.writeBytes(raw, runStart, runEnd - runStart);
          runStart = -1;
        }
        continue;
      }
      int ls = h.lineStart(i);
      int le = h.lineEnd(i);
      if (le + 1 < raw.length && raw[le] == '\r' && raw[le + 1] == '\n') {
        if (runStart < 0) {
          runStart = ls;
        } else if (ls != runEnd) {
          b.writeBytes(raw, runStart, runEnd - runStart);
          runStart = ls;
        }
        runEnd = le + 2;
        continue;
      }
      if (runStart >= 0) {
        b.writeBytes(raw, runStart, runEnd - runStart);
        runStart = -1;
      }
      b.writeBytes(raw, ls, le - ls); // a line ended by a bare LF goes out ended by CRLF
      b.writeShort(CRLF);
    }
    if (runStart >= 0) {
      b.writeBytes(raw, runStart, runEnd - runStart);
    }
    client.writeFields(h.status(), (name, value) -> b.field(name, value));
    if (upgrade != null) {
      b.writeBytes(CONNECTION_UPGRADE);
      b.field("upgrade", upgrade);
    } else if (!keepAlive) {
      b.writeBytes(HeadBytes.CONNECTION_CLOSE);
    } else if (http10Client) {
      b.writeBytes(HeadBytes.CONNECTION_KEEP_ALIVE);
    }
    b.writeShort(CRLF);
    return b.toBuffer(alloc, 256);
  }

  @Override
  public void body(ResponseBody piece) {
    client.sent(piece.data());
    if (pendingHead != null && piece.bytes().readableBytes() <= JOIN_BYTES) {
      ByteBuf head = pendingHead;
      pendingHead = null;
      head.writeBytes(piece.bytes());
      piece.release();
      piece = new ResponseBody(head, 0, piece.last());
    } else {
      readComplete();
    }
    if (piece.last()) {
      client.lastWrite();
      client.whenWritten(out.writeAndFlush(piece.bytes()));
    } else {
      out.write(piece.bytes(), out.voidPromise());
      client.deferFlush();
      client.pullUpstream();
    }
  }

  @Override
  public void readComplete() {
    if (pendingHead != null) {
      ByteBuf head = pendingHead;
      pendingHead = null;
      out.write(head, out.voidPromise());
    }
  }

  @Override
  public boolean nothingSent() {
    return pendingHead != null;
  }

  @Override
  public void release() {
    if (pendingHead != null) {
      pendingHead.release(); // the exchange died between the head and its body
      pendingHead = null;
    }
  }
}
