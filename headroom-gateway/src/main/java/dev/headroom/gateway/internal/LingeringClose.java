package dev.headroom.gateway.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufHolder;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.ReferenceCountUtil;
import java.time.Duration;

/**
 * How the gateway closes a client connection after a response that ends it (a 400, 408, 413,
 * 431..., or any response sent with {@code Connection: close}) and an idle one: a lingering close
 * (RFC 9112 section 9.6, "Tear-down").
 *
 * <p>Why: closing a socket whose receive buffer still holds bytes the gateway never read (a body
 * refused with 413 while the client keeps sending it, a head still trickling in when 408 is
 * said) makes the kernel answer with a reset instead of a FIN, and a reset can destroy the
 * response before the client reads it. So the gateway first flushes what it wrote, then shuts
 * its write side down (the client reads the response, then the end of the stream), keeps reading
 * and drops whatever still arrives, and closes fully when the client closes, when {@link #TIME}
 * has passed on the gateway's {@link Timers}, or when {@link #BYTES} were dropped, whichever is
 * first: a client that never closes, or keeps sending, is still cut. nginx ({@code
 * lingering_close}) and Apache httpd close the same way.
 *
 * <p>State: the bytes dropped so far and the timer; the handler goes first in the pipeline, so
 * what is dropped is never decoded and never reaches the {@link ProxyHandler}. Confined to the
 * channel's event loop.
 */
public final class LingeringClose extends ChannelInboundHandlerAdapter {
  /** The longest a closing connection is read from (and dropped) before it is closed anyway. */
  static final Duration TIME = Duration.ofSeconds(2);
  /** The most bytes dropped from a closing connection before it is closed anyway. */
  static final long BYTES = 1L << 20;
  static final String NAME = "lingering-close";

  /** Bytes dropped so far: grows with every read, and ends the linger past {@link #BYTES}. */
  private long dropped;
  /** The time bound, set once the handler is in place and cancelled when the channel closes first. */
  private Timers.Timer timer;

  private LingeringClose() {}

  /**
   * Closes {@code ch} lingering: everything written to it is flushed first. A channel that cannot
   * be half-closed, or is closed already, is simply closed.
   */
  public static void close(Channel ch, Timers timers) {
    if (!(ch instanceof DuplexChannel duplex) || !ch.isActive() || duplex.isOutputShutdown()
        || ch.pipeline().get(NAME) != null) {
      ch.close();
      return;
    }
    LingeringClose l = new LingeringClose();
    ch.pipeline().addFirst(NAME, l);
    l.timer = timers.schedule(ch.eventLoop(), timers.now() + TIME.toNanos(), ch::close);
    ch.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(w -> {
      if (!w.isSuccess()) {
        ch.close();
        return;
      }
      // on TLS, what was written is encrypted and out: end the TLS stream too (close_notify,
      // RFC 8446 section 6.1) before the TCP one, so that the client sees a clean end
      SslHandler ssl = ch.pipeline().get(SslHandler.class);
      if (ssl == null) {
        shutdownOutput(duplex);
      } else {
        ssl.closeOutbound().addListener(n -> shutdownOutput(duplex));
      }
    });
    ch.read(); // auto-read is off on client connections: ask for what the client still sends
  }

  private static void shutdownOutput(DuplexChannel duplex) {
    duplex.shutdownOutput().addListener(s -> {
      if (!s.isSuccess()) {
        duplex.close();
      }
    });
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    long n = msg instanceof ByteBuf b ? b.readableBytes() : msg instanceof ByteBufHolder h ? h.content().readableBytes() : 0;
    ReferenceCountUtil.release(msg);
    dropped += n;
    if (dropped > BYTES) {
      ctx.close();
    }
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    if (ctx.channel().isActive() && !ctx.channel().config().isAutoRead()) {
      ctx.read();
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    if (timer != null) {
      timer.cancel();
      timer = null;
    }
    ctx.fireChannelInactive();
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
    // the output shut down, or the input ended: nothing for the handlers after this one to act on
    ReferenceCountUtil.release(evt);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    ctx.close(); // a reset from the client, say: nothing more to wait for
  }
}
