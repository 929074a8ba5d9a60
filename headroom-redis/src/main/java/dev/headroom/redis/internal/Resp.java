package dev.headroom.redis.internal;

import io.netty.buffer.ByteBuf;
import java.util.Arrays;

/**
 * A growable buffer of RESP bulk strings ({@code $<length>\r\n<bytes>\r\n}), written by the
 * thread that makes a call. Not thread-safe; one per call.
 */
final class Resp {

  /** The most a thread's scratch buffer keeps between calls; a larger one is dropped. */
  private static final int SCRATCH_KEPT = 16 * 1024;

  private static final ThreadLocal<Resp> SCRATCH = ThreadLocal.withInitial(() -> new Resp(1024));

  private byte[] buf;
  private int size;

  Resp(int capacity) {
    buf = new byte[capacity];
  }

  /**
   * This thread's buffer, emptied: for an encoding that is copied out ({@link #toBytes}) before the
   * thread encodes anything else, so that a call allocates only its exact bytes.
   */
  static Resp scratch() {
    Resp r = SCRATCH.get();
    if (r.buf.length > SCRATCH_KEPT) {
      r.buf = new byte[1024];
    }
    r.size = 0;
    return r;
  }

  /** Part of bytes already encoded. */
  Resp raw(byte[] encoded, int from, int length) {
    ensure(length);
    System.arraycopy(encoded, from, buf, size, length);
    size += length;
    return this;
  }

  /** How many bytes are encoded so far. */
  int size() {
    return size;
  }

  /** A bulk string of these bytes. */
  Resp bulk(byte[] value) {
    header(value.length);
    raw(value);
    return crlf();
  }

  /** A bulk string of a decimal integer. */
  Resp bulk(long value) {
    header(digits(value));
    number(value);
    return crlf();
  }

  /** Bytes already encoded (bulk strings made by this class). */
  Resp raw(byte[] encoded) {
    ensure(encoded.length);
    System.arraycopy(encoded, 0, buf, size, encoded.length);
    size += encoded.length;
    return this;
  }

  /** {@code $length\r\n}: the start of a bulk string whose bytes follow. */
  Resp header(int length) {
    ensure(16);
    buf[size++] = '$';
    number(length);
    buf[size++] = '\r';
    buf[size++] = '\n';
    return this;
  }

  /** One byte of a bulk string's content. */
  Resp raw(byte b) {
    ensure(1);
    buf[size++] = b;
    return this;
  }

  /** The characters of a string known to be ASCII, as bytes. */
  Resp ascii(String s) {
    int n = s.length();
    ensure(n);
    for (int i = 0; i < n; i++) {
      buf[size++] = (byte) s.charAt(i);
    }
    return this;
  }

  Resp crlf() {
    ensure(2);
    buf[size++] = '\r';
    buf[size++] = '\n';
    return this;
  }

  byte[] toBytes() {
    return Arrays.copyOf(buf, size);
  }

  private void number(long v) {
    ensure(20);
    if (v < 0) {
      if (v == Long.MIN_VALUE) {
        ascii(Long.toString(v));
        return;
      }
      buf[size++] = '-';
      v = -v;
    }
    int n = digits(v);
    int end = size + n;
    for (int i = end - 1; i >= size; i--) {
      buf[i] = (byte) ('0' + v % 10);
      v /= 10;
    }
    size = end;
  }

  /** The characters of a decimal integer. */
  static int digits(long v) {
    if (v < 0) {
      return v == Long.MIN_VALUE ? 20 : 1 + digits(-v);
    }
    int n = 1;
    while (v >= 10) {
      v /= 10;
      n++;
    }
    return n;
  }

  private void ensure(int more) {
    if (size + more > buf.length) {
      buf = Arrays.copyOf(buf, Math.max(buf.length * 2, size + more));
    }
  }

  /** A non-negative integer's digits, to a Netty buffer. */
  static void writeDigits(ByteBuf out, int v) {
    int n = digits(v);
    int div = 1;
    for (int i = 1; i < n; i++) {
      div *= 10;
    }
    for (; div > 0; div /= 10) {
      out.writeByte('0' + (v / div) % 10);
    }
  }

  /** One bulk string, encoded. */
  static byte[] encode(byte[] value) {
    return new Resp(value.length + 16).bulk(value).toBytes();
  }
}
