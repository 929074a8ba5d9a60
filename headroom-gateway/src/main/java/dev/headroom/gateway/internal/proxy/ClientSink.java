package dev.headroom.gateway.internal.proxy;

import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import java.util.function.BiConsumer;

/**
 * What a {@link ResponseRelay} may do to the client side of its exchange, and no more: write to
 * the client connection (past the HTTP encoder, or through it), add the exchange's RateLimit
 * fields, count the body bytes sent, say when the response's last piece is written, and pace the
 * upstream (read more only when the client can take it). The exchange ({@link ProxyExchange})
 * implements it; a relay never sees the exchange's request, decision or upstream leg. Confined to
 * the client connection's event loop.
 */
interface ClientSink {

  /** Where bytes go to the client past the HTTP encoder (a head and body as received). */
  ChannelHandlerContext bytesOut();

  /** Where HTTP messages go to the client through the HTTP encoder (a re-framed response). */
  ChannelHandlerContext messagesOut();

  /** Whether the connection stays open after this response. */
  boolean keepAlive();

  /** Whether the client spoke HTTP/1.0. */
  boolean http10();

  /**
   * Whether the client is an HTTP/2 stream, whose responses of known length and the gateway's own
   * answers are written as frames ({@link StreamRelay}, {@link LocalResponse#writeFrames}).
   */
  boolean frames();

  /** Whether the request was HEAD, whose response has no body. */
  boolean headRequest();

  /** The response ends with the connection (an HTTP/1.0 client's body of unknown length). */
  void closeAfter();

  /** Writes the RateLimit fields of the request's decision for a response of {@code status}, if it has one. */
  void writeFields(int status, BiConsumer<String, String> sink);

  /** Counts response body bytes handed to the client (content-bytes policies charge them). */
  void sent(long bytes);

  /** The response's last piece is being written: it is complete. */
  void lastWrite();

  /** Ends the response once {@code write}, its last, is done. */
  void whenWritten(ChannelFuture write);

  /** Flushes the client connection at the end of the upstream's read batch rather than now. */
  void deferFlush();

  /** Reads more of the upstream's response when the client can take it (back-pressure). */
  void pullUpstream();

  /** Reads more of the upstream's response whatever the client does (a body dropped or collected). */
  void readUpstream();

  /** Answers with a response the gateway made, in place of the upstream's. */
  void writeLocal(LocalResponse response);

  /** The rest of the response goes through {@code next} (a vend body found too large to rewrite). */
  void relayWith(ResponseRelay next);
}
