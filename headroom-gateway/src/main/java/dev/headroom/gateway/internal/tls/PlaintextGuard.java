package dev.headroom.gateway.internal.tls;

import dev.headroom.gateway.internal.LingeringClose;
import dev.headroom.gateway.internal.Timers;
import dev.headroom.gateway.internal.admin.GatewayMetrics;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.ssl.OptionalSslHandler;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The first handler of a TLS listener's connection: reads the first record header (five bytes)
 * and decides what the client speaks. A TLS record becomes an {@link SslHandler} of the context
 * in force when the connection was accepted; anything else (plain HTTP sent to the TLS port) is
 * counted ({@code headroom_tls_plaintext_refused_total}), answered with one 400 in cleartext that
 * says to use https, and closed: no handshake error, no stack trace.
 *
 * <p>Reads: the listener runs with auto-read off, so this handler asks for the first read when the
 * connection opens; {@link io.netty.handler.codec.ByteToMessageDecoder} and then the SslHandler
 * ask for more until the handshake is over, and the protocol's handlers from then on. A client
 * that sends nothing, or does not finish its handshake, within {@code timeouts.idle} is closed
 * (the gateway's {@link Timers} before the first record, the SslHandler's handshake timeout after).
 *
 * <p>Thread-safety: one per connection, confined to its event loop.
 */
final class PlaintextGuard extends OptionalSslHandler {
  private static final byte[] REFUSAL = ("HTTP/1.1 400 Bad Request\r\n"
      + "Content-Type: text/plain; charset=utf-8\r\n"
      + "Content-Length: 54\r\n"
      + "Connection: close\r\n\r\n"
      + "This port speaks TLS only: send the request to https.\n").getBytes(StandardCharsets.US_ASCII);

  private final GatewayMetrics metrics;
  private final Timers timers;
  private final Duration timeout;
  private Timers.Timer timer;

  PlaintextGuard(SslContext context, GatewayMetrics metrics, Timers timers, Duration timeout) {
    super(context);
    this.metrics = metrics;
    this.timers = timers;
    this.timeout = timeout;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) throws Exception {
    timer = timers.schedule(ctx.executor(), timers.now() + timeout.toNanos(), () -> {
      if (ctx.pipeline().context(this) != null) {
        ctx.close(); // nothing that reads as a record within timeouts.idle
      }
    });
    super.channelActive(ctx);
    ctx.read();
  }

  @Override
  protected void handlerRemoved0(ChannelHandlerContext ctx) throws Exception {
    if (timer != null) {
      timer.cancel();
    }
    super.handlerRemoved0(ctx);
  }

  @Override
  protected SslHandler newSslHandler(ChannelHandlerContext ctx, SslContext context) {
    SslHandler ssl = super.newSslHandler(ctx, context);
    ssl.setHandshakeTimeoutMillis(timeout.toMillis());
    return ssl;
  }

  @Override
  protected ChannelHandler newNonSslHandler(ChannelHandlerContext ctx) {
    metrics.tlsPlaintextRefused();
    return new Refusal(timers);
  }

  /**
   * Answers a cleartext client once and closes lingering ({@link LingeringClose}: what it still
   * sends is read and dropped for a while, so that it reads the answer before any reset).
   */
  private static final class Refusal extends ChannelInboundHandlerAdapter {
    private final Timers timers;

    Refusal(Timers timers) {
      this.timers = timers;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
      ctx.writeAndFlush(Unpooled.wrappedBuffer(REFUSAL)).addListener(f -> LingeringClose.close(ctx.channel(), timers));
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      ReferenceCountUtil.release(msg);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }
}
