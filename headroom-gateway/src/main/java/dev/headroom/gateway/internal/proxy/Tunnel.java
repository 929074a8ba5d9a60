package dev.headroom.gateway.internal.proxy;

import dev.headroom.gateway.internal.Timers;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A byte tunnel between two channels: what one side's channel reads is written to the other's, as
 * it is, until either side closes or the tunnel carries nothing for its idle time. It is what an
 * upgraded connection becomes (RFC 9110 section 7.8: after a 101 the connection speaks the new
 * protocol, such as WebSocket frames, RFC 6455), and it knows nothing of how either side was framed
 * before: its two channels only have to read and write {@link ByteBuf}s at the end of their
 * pipelines. The HTTP/1.1 client side ({@link ProxyExchange}) removes its HTTP codec first; an
 * HTTP/2 stream (extended CONNECT, RFC 8441, {@link TunnelRequest}) has a handler in front of it
 * that turns DATA frames into bytes and back (and a close into END_STREAM).
 *
 * <p>Flow control: both channels run with auto-read off, and a side is read again only while the
 * other side is writable: what one side reads is written to the other and flushed at the end of
 * the read batch, and the next read is asked for only if the other side can still take more;
 * otherwise it is asked for when the other side becomes writable again. Each direction so buffers
 * at most one read batch beyond the channel's write buffer high-water mark, whatever the speeds of
 * the two peers (back-pressure, as in Netty's proxy examples).
 *
 * <p>State: per side, its channel, the bytes read from it and whether it closed; for the tunnel,
 * the time of the last byte read from either side (the timers' time), the one idle timer, and
 * whether it is over. The timer is re-armed lazily: it fires at the last activity it knew of plus
 * the idle time, and re-arms from the newer activity if there was some.
 *
 * <p>Closing: the first side to close (or fail) ends the tunnel: {@code onClosed} is told once,
 * with the bytes each way, and the other side is closed once what was written to it is flushed.
 * The idle timeout closes both. A flush to a peer that never reads is bounded by the idle time
 * too: the other side is closed regardless once that has passed.
 *
 * <p>Thread-safety: confined to one event loop, which both channels must share (the gateway opens
 * the upstream connection on the client connection's loop; an HTTP/2 stream runs on its
 * connection's).
 */
public final class Tunnel {
  private static final Logger LOG = LoggerFactory.getLogger(Tunnel.class);
  /** The pipeline name of a tunnel's end on each of its channels. */
  public static final String END = "tunnel";

  /** Why a tunnel ended. */
  public enum Reason {
    /** The client side's channel closed (or failed). */
    CLIENT_CLOSED,
    /** The upstream side's channel closed (or failed). */
    UPSTREAM_CLOSED,
    /** Nothing crossed the tunnel either way for its idle time ({@code timeouts.tunnelIdle}). */
    IDLE
  }

  /**
   * What a tunnel carried, told once when it ends: bytes read from the client and written
   * upstream, bytes read from the upstream and written to the client, and why it ended.
   */
  public record Closed(long fromClient, long fromUpstream, Reason reason) {}

  private final Timers timers;
  private final long idleNanos;
  private final Consumer<Closed> onClosed;
  private final End client;
  private final End upstream;
  /** The timers' time of the last byte read from either side. */
  private long lastActivity;
  private Timers.Timer timer;
  /** When the tunnel ended (the first close); null while it runs. */
  private Reason over;

  private Tunnel(Channel client, Channel upstream, Timers timers, Duration idle, Consumer<Closed> onClosed) {
    this.timers = timers;
    this.idleNanos = idle.toNanos();
    this.onClosed = onClosed;
    this.client = new End(client, Reason.CLIENT_CLOSED);
    this.upstream = new End(upstream, Reason.UPSTREAM_CLOSED);
    this.client.other = this.upstream;
    this.upstream.other = this.client;
  }

  /**
   * Opens a tunnel between {@code client} and {@code upstream}: adds its end at the tail of each
   * channel's pipeline, turns auto-read off on both and starts reading both. Call on their shared
   * event loop, once what is in front of the tail passes bytes on as they are; a decoder still
   * holding bytes that belong to the tunnel is removed after this call, so that Netty hands them
   * on to the tunnel's end. {@code onClosed} is called once, on the loop, when the tunnel ends.
   *
   * @param idle how long the tunnel may carry nothing before both channels are closed
   */
  public static Tunnel open(Channel client, Channel upstream, Timers timers, Duration idle,
      Consumer<Closed> onClosed) {
    Objects.requireNonNull(onClosed, "onClosed");
    if (client.eventLoop() != upstream.eventLoop()) {
      throw new IllegalArgumentException("a tunnel's channels share one event loop");
    }
    if (idle.isNegative() || idle.isZero()) {
      throw new IllegalArgumentException("idle must be positive, not " + idle);
    }
    Tunnel t = new Tunnel(client, upstream, timers, idle, onClosed);
    t.lastActivity = timers.now();
    t.arm(t.lastActivity + t.idleNanos);
    for (End e : new End[] {t.client, t.upstream}) {
      e.channel.config().setAutoRead(false);
      e.channel.pipeline().addLast(END, e);
    }
    for (End e : new End[] {t.client, t.upstream}) {
      if (!e.channel.isActive()) {
        t.closed(e); // closed before the tunnel was in place: its channelInactive was missed
        return t;
      }
    }
    t.client.channel.read();
    t.upstream.channel.read();
    return t;
  }

  /** Bytes read from the client side so far. */
  long fromClient() {
    return client.bytes;
  }

  /** Bytes read from the upstream side so far. */
  long fromUpstream() {
    return upstream.bytes;
  }

  private void arm(long deadline) {
    timer = timers.schedule(client.channel.eventLoop(), deadline, this::timerFired);
  }

  private void timerFired() {
    timer = null;
    long now = timers.now();
    if (over != null) {
      // the flush to the side still open did not finish within the idle time
      client.channel.close();
      upstream.channel.close();
      return;
    }
    long deadline = lastActivity + idleNanos;
    if (now - deadline < 0) {
      arm(deadline);
      return;
    }
    LOG.debug("tunnel {} <-> {} idle for {} ns: closing", client.channel, upstream.channel, now - lastActivity);
    end(Reason.IDLE);
    client.channel.close();
    upstream.channel.close();
  }

  /** Side {@code e} closed or failed: the tunnel ends, and the other side closes once flushed. */
  private void closed(End e) {
    if (over != null) {
      if (timer != null && !client.channel.isActive() && !upstream.channel.isActive()) {
        timer.cancel(); // both are closed: nothing left to force
        timer = null;
      }
      return;
    }
    end(e.reason);
    Channel other = e.other.channel;
    if (other.isActive()) {
      other.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
      arm(timers.now() + idleNanos);
    }
  }

  private void end(Reason why) {
    over = why;
    if (timer != null) {
      timer.cancel();
      timer = null;
    }
    onClosed.accept(new Closed(client.bytes, upstream.bytes, why));
  }

  /**
   * One side of the tunnel: the handler at the tail of its channel, which writes what the channel
   * reads to the other side and reads again only while the other side is writable.
   */
  private final class End extends ChannelInboundHandlerAdapter {
    final Channel channel;
    final Reason reason;
    End other;
    /** Bytes read from this side. */
    long bytes;
    /** Whether bytes were written to the other side since its last flush. */
    boolean unflushed;

    End(Channel channel, Reason reason) {
      this.channel = channel;
      this.reason = reason;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (!(msg instanceof ByteBuf b) || over != null) {
        ReferenceCountUtil.release(msg); // nothing else crosses a tunnel, nor anything after its end
        return;
      }
      int n = b.readableBytes();
      if (n == 0) {
        b.release();
        return;
      }
      bytes += n;
      lastActivity = timers.now();
      other.channel.write(b, other.channel.voidPromise()); // a failed write closes the other side (exceptionCaught)
      unflushed = true;
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
      if (unflushed) {
        unflushed = false;
        other.channel.flush();
      }
      if (over == null && other.channel.isWritable()) {
        channel.read();
      }
      // else: the other side's channelWritabilityChanged reads this side again
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
      if (over == null && channel.isWritable() && other.channel.isActive()) {
        other.channel.read();
      }
      ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      closed(this);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      LOG.debug("tunnel channel {} failed", ctx.channel(), cause);
      ctx.close();
    }
  }
}
