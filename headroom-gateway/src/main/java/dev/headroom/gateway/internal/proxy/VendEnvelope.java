package dev.headroom.gateway.internal.proxy;

import dev.headroom.vend.format.VendRequestException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpUtil;
import java.util.OptionalLong;

/**
 * A vend call's envelope while it is read whole to be decided (seed 003), bounded by the route's
 * {@code maxRequestBytes} or {@code limits.maxBodyBytes}, whichever is smaller
 * ({@link Triage#vendMaxBytes}); then sent upstream in one piece. Confined to the exchange's
 * event loop; its buffer is taken or released once.
 */
final class VendEnvelope {
  private final long max;
  private ByteBuf bytes;

  VendEnvelope(ByteBufAllocator alloc, HttpRequest request, VendRoutes vend, long maxBody) {
    this.max = Triage.vendMaxBytes(vend, maxBody);
    long declared = HttpUtil.getContentLength(request, -1L);
    this.bytes = alloc.heapBuffer((int) Math.min(Math.max(declared, 256), max));
  }

  /**
   * Takes a piece of the body (released here); false, keeping nothing of it, when the body read so
   * far ({@code total} bytes) is over the bound.
   */
  boolean add(HttpContent c, long total) {
    try {
      if (total > max) {
        return false;
      }
      bytes.writeBytes(c.content()); // within max: checked above
      return true;
    } finally {
      c.release();
    }
  }

  /**
   * The answer to a body over the bound, found while reading it: as headroom-vend's reader answers
   * an oversized envelope (see {@link Triage}).
   */
  LocalResponse tooLarge() {
    return Triage.vendError(VendRequestException.bodyTooLarge(max, OptionalLong.empty()));
  }

  /** The envelope's bytes, for the decision. */
  byte[] copy() {
    return ByteBufUtil.getBytes(bytes);
  }

  /** The buffer, handed over to be written upstream. */
  ByteBuf take() {
    ByteBuf b = bytes;
    bytes = null;
    return b;
  }

  void release() {
    if (bytes != null) {
      bytes.release();
      bytes = null;
    }
  }
}
