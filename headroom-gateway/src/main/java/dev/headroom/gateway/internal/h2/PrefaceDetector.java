package dev.headroom.gateway.internal.h2;

import dev.headroom.gateway.internal.Timers;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Tells, on a cleartext connection, HTTP/2 by prior knowledge (RFC 9113 section 3.3: the client begins
 * with the connection preface {@code PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n}) from HTTP/1.1, and installs the
 * handlers of the one it is. The decision is made at the first byte that differs from the preface (an
 * HTTP/1.1 request differs by its fourth byte at the latest: no method is {@code PRI}), or when the 24
 * bytes of the preface are in; the bytes read so far are then handed to the installed handlers.
 *
 * <p>State: the bytes read so far (at most 23, each a prefix of the preface) and a timer: a client that
 * sends nothing distinguishing within {@code timeouts.idle} is closed, as a stalled HTTP/1.1 head is.
 *
 * <p>Thread-safety: confined to the connection's event loop.
 */
final class PrefaceDetector extends ChannelInboundHandlerAdapter {
  private static final byte[] PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

  private final Runnable installHttp1;
  private final Runnable installHttp2;
  private final Timers timers;
  private final Duration idle;
  private ByteBuf seen = Unpooled.EMPTY_BUFFER;
  private Timers.Timer timer;

  PrefaceDetector(Runnable installHttp1, Runnable installHttp2, Timers timers, Duration idle) {
    this.installHttp1 = installHttp1;
    this.installHttp2 = installHttp2;
    this.timers = timers;
    this.idle = idle;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    timer = timers.schedule(ctx.executor(), timers.now() + idle.toNanos(), ctx::close);
    ctx.read(); // auto-read is off on client connections; the handlers installed later take over
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!(msg instanceof ByteBuf in)) {
      ReferenceCountUtil.release(msg);
      return;
    }
    ByteBuf all = seen.isReadable() ? Unpooled.wrappedBuffer(seen, in) : in;
    seen = Unpooled.EMPTY_BUFFER;
    int n = Math.min(all.readableBytes(), PREFACE.length);
    for (int i = 0; i < n; i++) {
      if (all.getByte(all.readerIndex() + i) != PREFACE[i]) {
        decided(ctx, installHttp1, all);
        return;
      }
    }
    if (n == PREFACE.length) {
      decided(ctx, installHttp2, all);
      return;
    }
    seen = all;
    ctx.read();
  }

  private void decided(ChannelHandlerContext ctx, Runnable install, ByteBuf read) {
    cancel();
    ChannelPipeline p = ctx.pipeline();
    install.run();
    p.remove(this);
    p.fireChannelActive();
    p.fireChannelRead(read);
    p.fireChannelReadComplete();
  }

  private void cancel() {
    if (timer != null) {
      timer.cancel();
      timer = null;
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    cancel();
    seen.release();
    seen = Unpooled.EMPTY_BUFFER;
  }
}
