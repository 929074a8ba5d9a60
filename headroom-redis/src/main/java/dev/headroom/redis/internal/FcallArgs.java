package dev.headroom.redis.internal;

import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.protocol.CommandArgs;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/**
 * The arguments of one call of the decision code ({@code FCALL}, {@code EVALSHA} or {@code EVAL}:
 * the function, SHA-1 or script, then numkeys, keys and arguments), already encoded as RESP bulk
 * strings by the caller's thread (see {@link DecisionScript#encode}). Lettuce's I/O thread, which
 * every caller of a connection shares, then only copies them into the socket buffer instead of
 * encoding a dozen arguments one by one.
 *
 * <p>The first key is also given to Lettuce as an ordinary key, since a Cluster connection routes
 * a command by it; it is not written twice ({@link #count()} and {@link #encode(ByteBuf)} write
 * the pre-encoded form only).
 */
public final class FcallArgs extends CommandArgs<byte[], byte[]> {

  private final byte[] head;
  private final byte[] tail;
  private final int count;

  /**
   * @param head the function name, SHA-1 or script, not yet encoded
   * @param call the rest of the call, encoded
   */
  public FcallArgs(byte[] head, DecisionScript.Call call) {
    super(ByteArrayCodec.INSTANCE);
    this.head = head;
    this.tail = call.encoded();
    this.count = 1 + call.arguments();
    super.addKey(call.firstKey());
  }

  /** The function name, SHA-1 or script as a string; see {@link #FcallArgs(byte[], DecisionScript.Call)}. */
  public FcallArgs(String head, DecisionScript.Call call) {
    this(head.getBytes(StandardCharsets.UTF_8), call);
  }

  @Override
  public int count() {
    return count;
  }

  @Override
  public void encode(ByteBuf buf) {
    buf.writeByte('$');
    Resp.writeDigits(buf, head.length);
    buf.writeByte('\r').writeByte('\n');
    buf.writeBytes(head);
    buf.writeByte('\r').writeByte('\n');
    buf.writeBytes(tail);
  }

  @Override
  public String toCommandString() {
    return new String(head, 0, Math.min(head.length, 40), StandardCharsets.UTF_8) + " (" + count + " arguments)";
  }
}
