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
  private final ClientSink client;
  private final VendCall.Allowed call;
  private final VendRoutes vend;
  private final ChannelHandlerContext out;
  private HttpResponse head;
  private ByteBuf collected;

  VendRelay(ClientSink client, VendCall.Allowed call, VendRoutes vend, ResponseHead h) {
    this.client = client;
    this.call = call;
    this.vend = vend;
    this.out = client.messagesOut();
    this.head = h.toHttpResponse();
    this.collected = out.alloc().heapBuffer();
  }

  /**
   * Whether the upstream's response is read whole to be rewritten: when the call declared the
   * extension (data goes in) or is a merged vend.capabilities, and the response is small enough
   * by its Content-Length (chunked ones are collected until they prove too large).
   */
  static boolean transforms(VendCall.Allowed call, VendRoutes vend, boolean headRequest, ResponseHead h) {
    if (call == null || headRequest) {
      return false;
    }
    boolean wanted = call.call().declaresRateLimit()
        || (call.call().isCapabilities() && vend.settings().mergeCapabilities());
    long declared = h.framing() == ResponseHead.Framing.FIXED ? h.contentLength()
        : h.framing() == ResponseHead.Framing.NONE ? 0 : -1;
    return wanted && declared <= vend.settings().maxResponseBytes() && h.status() != 204
        && h.status() != 304;
  }

  @Override
  public void body(ResponseBody piece) {
    HttpContent c = piece.last() ? new DefaultLastHttpContent(piece.bytes()) : new DefaultHttpContent(piece.bytes());
    boolean last = c instanceof LastHttpContent;
    int n = c.content().readableBytes();
    if (collected.readableBytes() + (long) n > vend.settings().maxResponseBytes()) {
      // larger than the bound: passed through unchanged, with the RateLimit fields only
      HttpResponse h = head;
      ByteBuf sofar = collected;
      head = null;
      collected = null;
      ReframedRelay rest = new ReframedRelay(client, null);
      client.relayWith(rest);
      client.sent(sofar.readableBytes());
      out.write(ReframedRelay.clientResponse(client, h));
      out.write(new DefaultHttpContent(sofar));
      client.deferFlush();
      rest.content(c);
      return;
    }
    collected.writeBytes(c.content());
    c.release();
    if (!last) {
      client.readUpstream();
      return;
    }
    byte[] bytes = ByteBufUtil.getBytes(collected);
    collected.release();
    collected = null;
    if (call.call().isCapabilities() && vend.settings().mergeCapabilities()) {
      bytes = vend.limiter().mergeCapabilities(bytes);
    }
    bytes = call.decision().decorate(bytes);
    HttpResponse h = head;
    head = null;
    h.headers().remove(HttpHeaderNames.TRANSFER_ENCODING);
    h.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, bytes.length);
    client.sent(bytes.length);
    client.lastWrite();
    out.write(ReframedRelay.clientResponse(client, h));
    client.whenWritten(out.writeAndFlush(new DefaultLastHttpContent(Unpooled.wrappedBuffer(bytes))));
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
