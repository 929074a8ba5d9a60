package dev.headroom.gateway.internal.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.AsciiString;
import io.netty.util.concurrent.FastThreadLocal;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A message head assembled in a heap array, then copied into a buffer at once.
 *
 * <p>Heads are many short pieces (a name, a value, a CRLF). Written one by one into a direct
 * buffer, each piece of a {@code String} cost an array copy of its characters and a checked
 * {@code Unsafe.copyMemory} into native memory; copy-memory checks alone were 7% of the event
 * loop's user time on forwarded requests (async-profiler). Here each piece is an array copy within
 * the heap, and the head crosses to native memory in one copy. The gateway's own responses
 * ({@code LocalResponse.head()} in the proxy) are serialised with it too, into an array they keep.
 *
 * <p>One per event-loop thread, used within one call and never across one: a head is begun,
 * written and turned into a buffer before anything else can run on the thread. Text is written
 * one byte per character, the character's low eight bits: every text written here is ASCII (the
 * gateway's own fields) or came off the wire one character per byte (Netty's decoder builds
 * request fields so), which this writes back unchanged.
 */
public final class HeadBytes {
  public static final byte[] HTTP_1_1_SP = "HTTP/1.1 ".getBytes(StandardCharsets.US_ASCII);
  public static final byte[] CRLF_BYTES = "\r\n".getBytes(StandardCharsets.US_ASCII);
  /** The connection's fate, as the gateway writes it into its responses' heads. */
  public static final byte[] CONNECTION_CLOSE = "connection: close\r\n".getBytes(StandardCharsets.US_ASCII);
  public static final byte[] CONNECTION_KEEP_ALIVE = "connection: keep-alive\r\n".getBytes(StandardCharsets.US_ASCII);
  private static final int CRLF = ('\r' << 8) | '\n';
  private static final int COLON_SP = (':' << 8) | ' ';

  private static final FastThreadLocal<HeadBytes> LOCAL = new FastThreadLocal<>() {
    @Override
    protected HeadBytes initialValue() {
      return new HeadBytes();
    }
  };

  /** A scratch array that grew beyond this is dropped after use, so one huge head does not stay. */
  private static final int KEEP_BYTES = 16 * 1024;

  private byte[] buf = new byte[1024];
  private int len;

  /** This thread's writer, emptied. */
  public static HeadBytes begin() {
    HeadBytes h = LOCAL.get();
    h.len = 0;
    return h;
  }

  private void ensure(int more) {
    if (len + more > buf.length) {
      buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + more));
    }
  }

  public void writeByte(int b) {
    ensure(1);
    buf[len++] = (byte) b;
  }

  /** Two bytes, high first (a CRLF as {@code ('\r' << 8) | '\n'}). */
  public void writeShort(int s) {
    ensure(2);
    buf[len++] = (byte) (s >>> 8);
    buf[len++] = (byte) s;
  }

  public void writeBytes(byte[] b) {
    writeBytes(b, 0, b.length);
  }

  public void writeBytes(byte[] b, int from, int n) {
    ensure(n);
    System.arraycopy(b, from, buf, len, n);
    len += n;
  }

  /** Characters as bytes, each its low eight bits (see the class comment). */
  @SuppressWarnings("deprecation") // String.getBytes(int, int, byte[], int) is exactly this
  public void latin1(CharSequence s) {
    int n = s.length();
    ensure(n);
    if (s instanceof String str) {
      str.getBytes(0, n, buf, len);
    } else if (s instanceof AsciiString a) {
      a.copy(0, buf, len, n);
    } else {
      for (int i = 0; i < n; i++) {
        buf[len + i] = (byte) s.charAt(i);
      }
    }
    len += n;
  }

  public int length() {
    return len;
  }

  /** The head as a new array; the writer may be reused after. */
  public byte[] toArray() {
    byte[] a = Arrays.copyOf(buf, len);
    if (buf.length > KEEP_BYTES) {
      buf = new byte[1024];
    }
    return a;
  }

  /** The head in a new buffer with room for {@code extra} more bytes; the writer may be reused after. */
  public ByteBuf toBuffer(ByteBufAllocator alloc, int extra) {
    ByteBuf b = alloc.buffer(len + extra);
    b.writeBytes(buf, 0, len);
    if (buf.length > KEEP_BYTES) {
      buf = new byte[1024];
    }
    return b;
  }

  /** One field line of a head the gateway writes; characters go out as ISO-8859-1 bytes. */
  public void field(byte[] nameColonSp, CharSequence value) {
    writeBytes(nameColonSp);
    latin1(value);
    writeShort(CRLF);
  }

  /** As {@link #field(byte[], CharSequence)}, the name given as text. */
  public void field(CharSequence name, CharSequence value) {
    latin1(name);
    writeShort(COLON_SP);
    latin1(value);
    writeShort(CRLF);
  }
}
