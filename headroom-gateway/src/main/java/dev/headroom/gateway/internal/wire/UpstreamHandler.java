package dev.headroom.gateway.internal.wire;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The upstream end of an exchange: passes the upstream connection's events to the exchange using
 * the connection. It stays in the connection's pipeline for the connection's life (adding and
 * removing a handler per exchange cost a pipeline rebuild per request); while no exchange is
 * attached it drops whatever arrives.
 *
 * <p>Thread-safety: confined to the upstream channel's event loop, which is the client's.
 */
public final class UpstreamHandler extends ChannelInboundHandlerAdapter {
  private static final Logger LOG = LoggerFactory.getLogger(UpstreamHandler.class);

  public enum Event { READ, READ_COMPLETE, WRITABLE, INACTIVE, ERROR }

  private BiConsumer<Event, Object> sink;

  /** Passes this connection's events to an exchange until {@link #detach()}. */
  public void attach(BiConsumer<Event, Object> sink) {
    this.sink = sink;
  }

  public void detach() {
    sink = null;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (sink == null) {
      ReferenceCountUtil.release(msg);
      return;
    }
    sink.accept(Event.READ, msg);
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    if (sink != null) {
      sink.accept(Event.READ_COMPLETE, null);
    }
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    if (sink != null && ctx.channel().isWritable()) {
      sink.accept(Event.WRITABLE, null);
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    if (sink != null) {
      sink.accept(Event.INACTIVE, null);
    }
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    LOG.debug("upstream connection {} failed", ctx.channel(), cause);
    if (sink != null) {
      sink.accept(Event.ERROR, cause);
    } else {
      ctx.close();
    }
  }
}
