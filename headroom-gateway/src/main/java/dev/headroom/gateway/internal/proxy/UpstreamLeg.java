package dev.headroom.gateway.internal.proxy;

import dev.headroom.gateway.internal.wire.UpstreamHandler;
import dev.headroom.gateway.internal.wire.UpstreamResponseDecoder;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import java.util.function.BiConsumer;

/**
 * The upstream side of one {@link ProxyExchange}: the pooled connection it borrowed (with the
 * connection's {@link UpstreamHandler} and {@link UpstreamResponseDecoder}), from the moment its
 * request head goes up until the exchange hands the connection back to its pool or closes it.
 * Everything here belongs to that one borrowing, so it is made when the connection is acquired
 * and dropped with it, rather than living in the exchange from its start.
 *
 * <p>Confined to the client connection's event loop (the upstream connection is on the same one).
 */
final class UpstreamLeg {
  final UpstreamPool pool;
  final Channel channel;
  private final UpstreamHandler handler;
  private final UpstreamResponseDecoder decoder;
  /** When the request head went up (the timers' time): the response timeout and latency count from it. */
  final long sentNanos;
  /** Whether the request body goes up in chunks (it came in chunks). */
  final boolean chunked;
  /** Whether the connection may go back to the pool: cleared by anything that leaves its framing in doubt. */
  private boolean reusable = true;

  /**
   * Takes {@code channel} for one exchange: its events go to {@code sink}, and its decoder expects
   * the response to a HEAD request ({@code headRequest}: no body) or to another method.
   */
  UpstreamLeg(UpstreamPool pool, Channel channel, BiConsumer<UpstreamHandler.Event, Object> sink, boolean headRequest,
      boolean chunked, long sentNanos) {
    this.pool = pool;
    this.channel = channel;
    this.handler = (UpstreamHandler) channel.pipeline().get(UpstreamPool.EXCHANGE);
    this.decoder = (UpstreamResponseDecoder) channel.pipeline().get(UpstreamPool.DECODER);
    this.chunked = chunked;
    this.sentNanos = sentNanos;
    handler.attach(sink);
    decoder.expectNoBody(headRequest);
    decoder.dechunk(false);
    decoder.expectUpgrade(false);
  }

  /** The request asks to upgrade the connection: a 101 switches it (see {@link UpstreamResponseDecoder#expectUpgrade}). */
  void expectUpgrade() {
    decoder.expectUpgrade(true);
    reusable = false; // whatever the answer, a connection asked to switch goes back to no pool
  }

  /**
   * The upstream switched protocols: the connection leaves HTTP and its pool for good. The
   * exchange's handler comes out of its pipeline, so that what the connection reads next reaches
   * the end a {@link Tunnel} adds; call {@link #dropDecoder} once that end is in place.
   */
  Channel switched() {
    reusable = false;
    handler.detach();
    channel.pipeline().remove(handler);
    return channel;
  }

  /** Removes the response decoder, which hands the bytes it holds after the 101 on to the tunnel's end. */
  void dropDecoder() {
    channel.pipeline().remove(decoder);
  }

  /**
   * Writes without a listener: a failed write fires exceptionCaught on the upstream channel, which
   * the exchange hears as an ERROR event ({@link #fail}).
   */
  void write(Object msg) {
    channel.write(msg, channel.voidPromise());
  }

  void writeAndFlush(ByteBuf b) {
    channel.writeAndFlush(b, channel.voidPromise());
  }

  void flush() {
    channel.flush();
  }

  void read() {
    channel.read();
  }

  boolean isActive() {
    return channel.isActive();
  }

  boolean isWritable() {
    return channel.isWritable();
  }

  /** The response body arrives without its chunk framing (the relay re-frames it or reads it whole). */
  void dechunk() {
    decoder.dechunk(true);
  }

  /** The connection will not carry another exchange (it said close, or its request was not sent whole). */
  void doNotReuse() {
    reusable = false;
  }

  /** The connection failed: it is closed, and its closing still reaches the exchange (INACTIVE). */
  void fail() {
    reusable = false;
    channel.close();
  }

  /** The exchange gives the connection up mid-way: detached, then closed. */
  void close() {
    handler.detach();
    channel.close();
  }

  /** The exchange ended: the connection goes back to its pool when it ended cleanly and can be reused, else closes. */
  void finish(boolean clean) {
    handler.detach();
    if (clean && reusable && channel.isActive() && decoder.idle()) {
      pool.release(channel);
    } else {
      channel.close();
    }
  }
}
