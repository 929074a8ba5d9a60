package dev.headroom.gateway;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersDecoder;
import io.netty.handler.codec.http2.DefaultHttp2HeadersEncoder;
import io.netty.handler.codec.http2.Http2Exception;
import io.netty.handler.codec.http2.Http2Headers;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A hand-written HTTP/2 client for tests: frames written byte by byte as RFC 9113 section 4 lays them
 * out, so that a test can send what no well-behaved client would (floods, endless CONTINUATION, HPACK
 * bombs), and read back every frame the gateway sends. Header blocks are encoded and decoded with
 * Netty's HPACK coder.
 */
final class H2Wire implements AutoCloseable {
  static final int DATA = 0, HEADERS = 1, PRIORITY = 2, RST_STREAM = 3, SETTINGS = 4, PING = 6, GOAWAY = 7,
      WINDOW_UPDATE = 8, CONTINUATION = 9;
  static final int END_STREAM = 1, END_HEADERS = 4, ACK = 1;
  static final int ENHANCE_YOUR_CALM = 0xb, REFUSED_STREAM = 0x7, NO_ERROR = 0;

  /** One frame as read. */
  record Frame(int type, int flags, int stream, byte[] payload) {
    int errorCode() {
      int at = type == GOAWAY ? 4 : 0;
      return ((payload[at] & 0xff) << 24) | ((payload[at + 1] & 0xff) << 16) | ((payload[at + 2] & 0xff) << 8)
          | (payload[at + 3] & 0xff);
    }

    String debug() {
      return type == GOAWAY ? new String(payload, 8, payload.length - 8, StandardCharsets.US_ASCII) : "";
    }

    @Override
    public String toString() {
      return "Frame[type=" + type + ", flags=" + flags + ", stream=" + stream + ", length=" + payload.length
          + (type == GOAWAY ? ", error=" + errorCode() + ", debug=" + debug() : "") + "]";
    }
  }

  private final Socket socket;
  private final OutputStream out;
  private final DataInputStream in;
  private final DefaultHttp2HeadersEncoder encoder = new DefaultHttp2HeadersEncoder();
  private final DefaultHttp2HeadersDecoder decoder = new DefaultHttp2HeadersDecoder(false);
  private final ByteArrayOutputStream pending = new ByteArrayOutputStream();

  /** Connects, and sends the preface and an empty SETTINGS frame. */
  H2Wire(int port) throws IOException {
    socket = new Socket("127.0.0.1", port);
    socket.setSoTimeout(10_000);
    out = socket.getOutputStream();
    in = new DataInputStream(socket.getInputStream());
    pending.writeBytes("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    frame(SETTINGS, 0, 0, new byte[0]);
    flush();
    // the gateway's settings (its stream limit among them) apply once acknowledged (RFC 9113 section 6.5.3)
    Frame f;
    while ((f = read()) != null && !(f.type() == SETTINGS && (f.flags() & ACK) == 0)) {
      // its acknowledgement of ours, or a WINDOW_UPDATE
    }
    if (f == null) {
      throw new IOException("the gateway sent no SETTINGS");
    }
    frame(SETTINGS, ACK, 0, new byte[0]);
    flush();
  }

  /** Queues one frame (sent at the next {@link #flush}). */
  H2Wire frame(int type, int flags, int stream, byte[] payload) {
    pending.write(payload.length >>> 16);
    pending.write(payload.length >>> 8);
    pending.write(payload.length);
    pending.write(type);
    pending.write(flags);
    pending.write(stream >>> 24);
    pending.write(stream >>> 16);
    pending.write(stream >>> 8);
    pending.write(stream);
    pending.writeBytes(payload);
    return this;
  }

  /** Sends what was queued; false when the gateway closed the connection first. */
  boolean flush() {
    try {
      out.write(pending.toByteArray());
      out.flush();
      return true;
    } catch (IOException e) {
      return false;
    } finally {
      pending.reset();
    }
  }

  /** A request's header block: method, path, authority {@code test}, scheme http, then name-value pairs. */
  byte[] block(String method, String path, String... fields) throws Http2Exception {
    Http2Headers h = new DefaultHttp2Headers().method(method).path(path).scheme("http").authority("test");
    for (int i = 0; i + 1 < fields.length; i += 2) {
      h.add(fields[i], fields[i + 1]);
    }
    ByteBuf b = Unpooled.buffer();
    encoder.encodeHeaders(1, h, b);
    byte[] bytes = new byte[b.readableBytes()];
    b.readBytes(bytes);
    return bytes;
  }

  /** Queues a request's HEADERS frame. */
  H2Wire request(int stream, String method, String path, boolean endStream, String... fields) throws Http2Exception {
    return frame(HEADERS, END_HEADERS | (endStream ? END_STREAM : 0), stream, block(method, path, fields));
  }

  static byte[] int32(long v) {
    return new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v};
  }

  /** The next frame, or null at the end of the stream or after the read timeout. */
  Frame read() throws IOException {
    try {
      int len = in.readUnsignedByte() << 16 | in.readUnsignedByte() << 8 | in.readUnsignedByte();
      int type = in.readUnsignedByte();
      int flags = in.readUnsignedByte();
      int stream = in.readInt() & 0x7fffffff;
      byte[] p = new byte[len];
      in.readFully(p);
      return new Frame(type, flags, stream, p);
    } catch (EOFException | SocketTimeoutException e) {
      return null;
    } catch (IOException e) {
      if (String.valueOf(e.getMessage()).contains("reset")) {
        return null;
      }
      throw e;
    }
  }

  /** Every frame until the connection ends (or the read times out). */
  List<Frame> readAll() throws IOException {
    List<Frame> frames = new ArrayList<>();
    Frame f;
    while ((f = read()) != null) {
      frames.add(f);
    }
    return frames;
  }

  /** Frames until one of {@code type} on {@code stream} arrives (it included), or the connection ends. */
  List<Frame> readUntil(int type, int stream) throws IOException {
    List<Frame> frames = new ArrayList<>();
    Frame f;
    while ((f = read()) != null) {
      frames.add(f);
      if (f.type() == type && f.stream() == stream) {
        break;
      }
    }
    return frames;
  }

  /** Decodes a response HEADERS frame's block. */
  Http2Headers headers(Frame f) throws Http2Exception {
    return decoder.decodeHeaders(f.stream(), Unpooled.wrappedBuffer(f.payload()));
  }

  /** Whether the gateway closed the connection: the next read ends the stream. */
  boolean closed() throws IOException {
    socket.setSoTimeout(5_000);
    try {
      return in.read() == -1;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (IOException e) {
      return true; // reset
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
