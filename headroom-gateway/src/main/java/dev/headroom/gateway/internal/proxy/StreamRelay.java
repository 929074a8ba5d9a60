package dev.headroom.gateway.internal.proxy;

import dev.headroom.gateway.internal.wire.ResponseBody;
import dev.headroom.gateway.internal.wire.ResponseHead;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.Http2Headers;

/**
 * The direct path of an HTTP/2 stream: an upstream response whose length its head tells
 * (Content-Length, or no body at all: HEAD, 204, 304, Content-Length 0) goes to the client as a
 * HEADERS frame and DATA frames (RFC 9113 section 8.1), the head's kept fields taken from the
 * upstream's head as {@link RawRelay} takes them (hop-by-hop ones dropped through
 * {@link ResponseHead#hopByHop}), this gateway's RateLimit fields added, the names in lower case
 * ({@link StreamHead}); the body's pieces become DATA frames as they come, the last one ending the
 * stream. Nothing is written as HTTP/1.1 bytes to be parsed again by the stream's adapter.
 *
 * <p>Every other response of a stream keeps the byte path, which the stream's adapter turns into
 * frames: chunked bodies ({@link RawRelay}; their chunk framing and trailers are what that parser
 * is for), until-close bodies ({@link ReframedRelay}), and the paths that rewrite a response
 * ({@link VendRelay}; {@link NormalisedErrorRelay} answers with a {@link LocalResponse}, which a
 * stream is sent as frames too).
 *
 * <p>The HEADERS frame waits for the body's first piece, as the raw head does, so that a body broken
 * from its start can still be answered with 502; a response without a body is one HEADERS frame
 * with END_STREAM. Confined to the client connection's event loop.
 */
final class StreamRelay implements ResponseRelay {
  private final ClientSink client;
  private final ChannelHandlerContext out;
  /** Whether the response has no body (its end arrives with its head): HEADERS ends the stream. */
  private final boolean bodyless;
  /** The head not yet written, waiting for the first body piece (or the read's end). */
  private Http2Headers pendingHead;

  StreamRelay(ClientSink client, ResponseHead h) {
    this.client = client;
    this.out = client.bytesOut();
    this.bodyless = h.framing() == ResponseHead.Framing.NONE;
    this.pendingHead = headers(h, client);
  }

  /** Whether the stream relay carries a response with this head to {@code client}. */
  static boolean applies(ClientSink client, ResponseHead h) {
    return client.frames()
        && (h.framing() == ResponseHead.Framing.FIXED || h.framing() == ResponseHead.Framing.NONE);
  }

  /** The HEADERS of the client's response: the upstream's fields minus hop-by-hop ones, plus ours. */
  private static Http2Headers headers(ResponseHead h, ClientSink client) {
    Http2Headers out = StreamHead.of(h.status(), h.size() + 4);
    byte[] raw = h.raw();
    for (int i = 0; i < h.size(); i++) {
      if (!h.hopByHop(i)) {
        StreamHead.add(out, raw, h.lineStart(i), h.nameEnd(i), h.valueStart(i), h.lineEnd(i));
      }
    }
    client.writeFields(h.status(), (name, value) -> StreamHead.add(out, name, value));
    return out;
  }

  @Override
  public void body(ResponseBody piece) {
    client.sent(piece.data());
    ByteBuf bytes = piece.bytes();
    if (pendingHead != null) {
      Http2Headers head = pendingHead;
      pendingHead = null;
      if (piece.last() && !bytes.isReadable()) {
        bytes.release();
        client.lastWrite();
        client.whenWritten(out.writeAndFlush(new DefaultHttp2HeadersFrame(head, true)));
        return;
      }
      out.write(new DefaultHttp2HeadersFrame(head, false), out.voidPromise());
    }
    if (piece.last()) {
      client.lastWrite();
      client.whenWritten(out.writeAndFlush(new DefaultHttp2DataFrame(bytes, true)));
    } else if (bytes.isReadable()) {
      out.write(new DefaultHttp2DataFrame(bytes, false), out.voidPromise());
      client.deferFlush();
      client.pullUpstream();
    } else {
      bytes.release();
      client.pullUpstream();
    }
  }

  @Override
  public void readComplete() {
    // a response without a body ends with its head, which its end (read with it) writes
    if (pendingHead != null && !bodyless) {
      Http2Headers head = pendingHead;
      pendingHead = null;
      out.write(new DefaultHttp2HeadersFrame(head, false), out.voidPromise());
    }
  }

  @Override
  public boolean nothingSent() {
    return pendingHead != null;
  }

  @Override
  public void release() {
    pendingHead = null;
  }
}
