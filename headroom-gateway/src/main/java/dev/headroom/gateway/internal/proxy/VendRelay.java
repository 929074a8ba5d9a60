package dev.headroom.gateway.internal.proxy;

import dev.headroom.gateway.internal.wire.ResponseBody;
import dev.headroom.gateway.internal.wire.ResponseHead;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.LastHttpContent;

/**
 * The vend path (seed 003, the gateway part of the vend rate-limit extension): the response to a
 * call that declared the extension, or to a merged {@code vend.capabilities}, is read whole (up
 * to the route's {@code maxResponseBytes}), decorated with the call's rate-limit data (and the
 * gateway's capabilities merged in) and written with its new Content-Length. A body that proves
 * larger than the bound goes on unchanged through a {@link ReframedRelay}, with the RateLimit
 * fields only.
 */
final class VendRelay implements ResponseRelay {
  private final ProxyExchange ex;
  private final ChannelHandlerContext out;
  private HttpResponse head;
  private ByteBuf collected;

  VendRelay(ProxyExchange ex, ResponseHead h) {
    this.ex = ex;
    this.out = ex.conn.ctx;
    this.head = h.toHttpResponse();
    this.collected = out.alloc().heapBuffer();
  }

  /**
   * Whether the upstream's response is read whole to be rewritten: when the call declared the
   * extension (data goes in) or is a merged vend.capabilities, and the response is small enough
   * by its Content-Length (chunked ones are collected until they prove too large).
   */
  static boolean transforms(ProxyExchange ex, ResponseHead h) {
    if (ex.vendCall == null || ex.request.method().equals(HttpMethod.HEAD)) {
      return false;
    }
    boolean wanted = ex.vendCall.call().declaresRateLimit()
        || (ex.vendCall.call().isCapabilities() && ex.vend.settings().mergeCapabilities());
    long declared = h.framing() == ResponseHead.Framing.FIXED ? h.contentLength()
        : h.framing() == ResponseHead.Framing.NONE ? 0 : -1;
    return wanted && declared <= ex.vend.settings().maxResponseBytes() && h.status() != 204
        && h.status() != 304;
  }

  @Override
  public void body(ResponseBody piece) {
    HttpContent c = piece.last() ? new DefaultLastHttpContent(piece.bytes()) : new DefaultHttpContent(piece.bytes());
    boolean last = c instanceof LastHttpContent;
    int n = c.content().readableBytes();
    if (collected.readableBytes() + (long) n > ex.vend.settings().maxResponseBytes()) {
      // larger than the bound: passed through unchanged, with the RateLimit fields only
      HttpResponse h = head;
      ByteBuf sofar = collected;
      head = null;
      collected = null;
      ReframedRelay rest = new ReframedRelay(ex, null);
      ex.relay = rest;
      ex.responseBytes += sofar.readableBytes();
      out.write(ReframedRelay.clientResponse(ex, h));
      out.write(new DefaultHttpContent(sofar));
      ex.conn.deferFlush();
      rest.content(c);
      return;
    }
    collected.writeBytes(c.content());
    c.release();
    if (!last) {
      ex.upstream.read();
      return;
    }
    byte[] bytes = ByteBufUtil.getBytes(collected);
    collected.release();
    collected = null;
    if (ex.vendCall.call().isCapabilities() && ex.vend.settings().mergeCapabilities()) {
      bytes = ex.vend.limiter().mergeCapabilities(bytes);
    }
    bytes = ex.vendCall.decision().decorate(bytes);
    HttpResponse h = head;
    head = null;
    h.headers().remove(HttpHeaderNames.TRANSFER_ENCODING);
    h.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, bytes.length);
    ex.responseBytes += bytes.length;
    ex.lastWrite();
    out.write(ReframedRelay.clientResponse(ex, h));
    out.writeAndFlush(new DefaultLastHttpContent(Unpooled.wrappedBuffer(bytes)))
        .addListener(x -> ex.responseWritten(x.isSuccess()));
  }

  @Override
  public boolean nothingSent() {
    return head != null;
  }

  @Override
  public void release() {
    head = null;
    if (collected != null) {
      collected.release();
      collected = null;
    }
  }
}
