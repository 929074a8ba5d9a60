package dev.headroom.servlet.internal;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UnsupportedEncodingException;
import java.io.Writer;
import java.nio.charset.Charset;
import java.nio.charset.IllegalCharsetNameException;
import java.nio.charset.StandardCharsets;
import java.nio.charset.UnsupportedCharsetException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A response that counts the content bytes the application writes, through its output stream or
 * its writer, for {@code content-bytes} policies charged after the fact (DESIGN.md, request step
 * 4). A byte counts once the container's stream accepted it; a write that throws counts nothing.
 *
 * <p>The writer encodes each write at once into the counted stream (no buffer of its own), in the
 * response's character encoding at the time {@link #getWriter()} is first called, so nothing is
 * left unflushed when the container completes the response, synchronously or asynchronously.
 *
 * <p>Known over-count: bytes discarded by {@code resetBuffer()} or {@code reset()} after being
 * written were already counted.
 *
 * <p>Written from one thread at a time (the servlet contract); the count is read from any.
 */
public final class MeteredResponse extends HttpServletResponseWrapper {

  private final AtomicLong bytes = new AtomicLong();
  private CountingStream stream;
  private PrintWriter writer;

  public MeteredResponse(HttpServletResponse response) {
    super(response);
  }

  /** Content bytes written so far. */
  public long bytesWritten() {
    return bytes.get();
  }

  @Override
  public ServletOutputStream getOutputStream() throws IOException {
    if (writer != null) {
      throw new IllegalStateException("getWriter() has already been called for this response");
    }
    return counted();
  }

  @Override
  public PrintWriter getWriter() throws IOException {
    if (writer == null) {
      if (stream != null) {
        throw new IllegalStateException("getOutputStream() has already been called for this response");
      }
      writer = new PrintWriter(new EncodingWriter(counted(), charset(getCharacterEncoding())), false);
    }
    return writer;
  }

  private CountingStream counted() throws IOException {
    if (stream == null) {
      stream = new CountingStream(super.getOutputStream(), bytes);
    }
    return stream;
  }

  private static Charset charset(String name) throws UnsupportedEncodingException {
    if (name == null) {
      return StandardCharsets.ISO_8859_1; // the servlet default
    }
    try {
      return Charset.forName(name);
    } catch (IllegalCharsetNameException | UnsupportedCharsetException e) {
      throw new UnsupportedEncodingException(name);
    }
  }

  /** Delegates every call and counts what was accepted. */
  static final class CountingStream extends ServletOutputStream {
    private final ServletOutputStream out;
    private final AtomicLong bytes;

    CountingStream(ServletOutputStream out, AtomicLong bytes) {
      this.out = out;
      this.bytes = bytes;
    }

    @Override
    public void write(int b) throws IOException {
      out.write(b);
      bytes.incrementAndGet();
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      out.write(b, off, len);
      bytes.addAndGet(len);
    }

    @Override
    public void flush() throws IOException {
      out.flush();
    }

    @Override
    public void close() throws IOException {
      out.close();
    }

    @Override
    public boolean isReady() {
      return out.isReady();
    }

    @Override
    public void setWriteListener(WriteListener listener) {
      out.setWriteListener(listener);
    }
  }

  /**
   * Encodes each write straight into the stream. A high surrogate at the end of one write waits
   * for its low half in the next, so a pair split across writes is encoded as one character.
   */
  static final class EncodingWriter extends Writer {
    private final ServletOutputStream out;
    private final Charset charset;
    private char pendingHigh;

    EncodingWriter(ServletOutputStream out, Charset charset) {
      this.out = out;
      this.charset = charset;
    }

    @Override
    public void write(char[] cbuf, int off, int len) throws IOException {
      if (len <= 0) {
        return;
      }
      StringBuilder s = new StringBuilder(len + 1);
      if (pendingHigh != 0) {
        s.append(pendingHigh);
        pendingHigh = 0;
      }
      s.append(cbuf, off, len);
      emit(s);
    }

    @Override
    public void write(String str, int off, int len) throws IOException {
      if (len <= 0) {
        return;
      }
      StringBuilder s = new StringBuilder(len + 1);
      if (pendingHigh != 0) {
        s.append(pendingHigh);
        pendingHigh = 0;
      }
      s.append(str, off, off + len);
      emit(s);
    }

    private void emit(StringBuilder s) throws IOException {
      char last = s.charAt(s.length() - 1);
      if (Character.isHighSurrogate(last)) {
        pendingHigh = last;
        s.setLength(s.length() - 1);
      }
      if (s.length() > 0) {
        byte[] b = s.toString().getBytes(charset);
        out.write(b, 0, b.length);
      }
    }

    @Override
    public void flush() throws IOException {
      out.flush();
    }

    @Override
    public void close() throws IOException {
      if (pendingHigh != 0) {
        byte[] b = String.valueOf(pendingHigh).getBytes(charset);
        pendingHigh = 0;
        out.write(b, 0, b.length);
      }
      out.close();
    }
  }
}
