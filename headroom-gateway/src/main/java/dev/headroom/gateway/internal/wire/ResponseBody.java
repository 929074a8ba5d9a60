package dev.headroom.gateway.internal.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.ReferenceCounted;

/**
 * A piece of an upstream response's body as {@link UpstreamResponseDecoder} framed it: the bytes
 * as they arrived (chunk framing included, unless the decoder was told to remove it), how many of
 * them are body data, and whether the body ends with this piece. Owns {@link #bytes()}: whoever
 * receives a piece forwards or releases it.
 */
public final class ResponseBody implements ReferenceCounted {
  private final ByteBuf bytes;
  private final long data;
  private final boolean last;

  public ResponseBody(ByteBuf bytes, long data, boolean last) {
    this.bytes = bytes;
    this.data = data;
    this.last = last;
  }

  /** The end of a body, with nothing more to send. */
  public static ResponseBody end() {
    return new ResponseBody(Unpooled.EMPTY_BUFFER, 0, true);
  }

  public ByteBuf bytes() {
    return bytes;
  }

  /** Body data bytes in this piece (without chunk framing). */
  public long data() {
    return data;
  }

  public boolean last() {
    return last;
  }

  @Override
  public int refCnt() {
    return bytes.refCnt();
  }

  @Override
  public ResponseBody retain() {
    bytes.retain();
    return this;
  }

  @Override
  public ResponseBody retain(int increment) {
    bytes.retain(increment);
    return this;
  }

  @Override
  public ResponseBody touch() {
    bytes.touch();
    return this;
  }

  @Override
  public ResponseBody touch(Object hint) {
    bytes.touch(hint);
    return this;
  }

  @Override
  public boolean release() {
    return bytes.release();
  }

  @Override
  public boolean release(int decrement) {
    return bytes.release(decrement);
  }

  @Override
  public String toString() {
    return "ResponseBody[" + bytes.readableBytes() + " bytes, " + data + " data" + (last ? ", last]" : "]");
  }
}
