package dev.headroom.servlet.internal;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.ServletResponseWrapper;
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
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntConsumer;

/**
 * The response passed down the chain for an allowed, limited request. It does two things.
 *
 * <h2>RateLimit fields at commit, with the real status</h2>
 * The fields depend on the status (draft-ietf-httpapi-ratelimit-headers-09 section 6: servers may
 * leave them off 3xx responses), which is only known once the application has answered, yet they
 * must be added before the response is committed. So they are written at the first moment that
 * can commit it, with the status set by then: {@code sendError} (its status),
 * {@code sendRedirect} (302), {@code flushBuffer}, the first write, flush or close of the output
 * stream or writer, {@link jakarta.servlet.AsyncContext#complete()} of a context started through
 * {@link LimitedRequest}, and, when none of these happened, the end of the request (the filter
 * calls {@link #commitFields()}). {@code reset()} clears every header, so the fields are written
 * again at the next of these moments. Obtaining the stream or writer commits nothing, so it is not
 * one of them: a status set between {@code getOutputStream()} and the first write still counts.
 *
 * <h2>Content bytes, counted when they are kept</h2>
 * When counting, the bytes the application writes through the output stream or writer are counted
 * for {@code content-bytes} policies charged after the fact (ARCHITECTURE.md, request step 7). A byte
 * counts once the container's stream accepted it; a write that throws counts nothing. Bytes
 * discarded by {@code resetBuffer()} or {@code reset()} are not counted: those calls only succeed
 * while the response is uncommitted, when nothing has left the buffer, so every byte counted so far
 * is discarded and the count starts again from zero. HEAD responses transfer no content (RFC 9110
 * section 9.3.2) and are not counted (the filter does not ask for counting).
 *
 * <p>The counting writer encodes each write at once into the counted stream (no buffer of its
 * own), in the response's character encoding at the time {@link #getWriter()} is first called, so
 * nothing is left unflushed when the container completes the response. Without counting, the
 * container's own writer is used, watched for its first write.
 *
 * <p>Written from one thread at a time (the servlet contract); the count and the fields' state are
 * safe to read and set from any.
 */
public final class LimitedResponse extends HttpServletResponseWrapper {

  private final IntConsumer fields;
  private final boolean counting;
  private final AtomicLong bytes = new AtomicLong();
  private final AtomicBoolean fieldsWritten = new AtomicBoolean();
  private ServletOutputStream stream;
  private PrintWriter writer;
  private EncodingWriter encoder;

  /**
   * @param fields adds the RateLimit fields for a status to the wrapped response; called at most
   *     once between resets
   * @param counting whether content bytes are counted
   */
  public LimitedResponse(HttpServletResponse response, IntConsumer fields, boolean counting) {
    super(response);
    this.fields = fields;
    this.counting = counting;
  }

  /** The limited response inside a chain of wrappers, if there is one. */
  public static LimitedResponse find(ServletResponse response) {
    for (ServletResponse r = response; r != null; r = r instanceof ServletResponseWrapper ? ((ServletResponseWrapper) r).getResponse() : null) {
      if (r instanceof LimitedResponse) {
        return (LimitedResponse) r;
      }
    }
    return null;
  }

  /** Content bytes written and kept so far; zero when not counting. */
  public long bytesWritten() {
    return bytes.get();
  }

  /** Writes the fields now, for the status set so far, unless written already or committed. */
  public void commitFields() {
    commitFields(getStatus());
  }

  private void commitFields(int status) {
    if (fieldsWritten.compareAndSet(false, true) && !isCommitted()) {
      fields.accept(status);
    }
  }

  @Override
  public void sendError(int sc, String msg) throws IOException {
    commitFields(sc);
    super.sendError(sc, msg);
  }

  @Override
  public void sendError(int sc) throws IOException {
    commitFields(sc);
    super.sendError(sc);
  }

  @Override
  public void sendRedirect(String location) throws IOException {
    commitFields(SC_FOUND); // Servlet 6.0: a temporary redirect, 302
    super.sendRedirect(location);
  }

  @Override
  public void flushBuffer() throws IOException {
    commitFields();
    super.flushBuffer();
  }

  @Override
  public void resetBuffer() {
    super.resetBuffer(); // throws when committed: then the bytes were sent and stay counted
    discardCounted();
  }

  @Override
  public void reset() {
    super.reset();
    discardCounted();
    // Headers are gone, and the choice between stream and writer is open again (Servlet 6.0, reset()).
    fieldsWritten.set(false);
    stream = null;
    writer = null;
    encoder = null;
  }

  private void discardCounted() {
    bytes.set(0);
    if (encoder != null) {
      encoder.pendingHigh = 0;
    }
  }

  @Override
  public ServletOutputStream getOutputStream() throws IOException {
    if (writer != null) {
      throw new IllegalStateException("getWriter() has already been called for this response");
    }
    if (stream == null) {
      stream = new CountingStream(super.getOutputStream(), counting ? bytes : null, this::commitFields);
    }
    return stream;
  }

  @Override
  public PrintWriter getWriter() throws IOException {
    if (writer == null) {
      if (stream != null) {
        throw new IllegalStateException("getOutputStream() has already been called for this response");
      }
      if (counting) {
        Charset charset = charset(getCharacterEncoding());
        encoder = new EncodingWriter(new CountingStream(super.getOutputStream(), bytes, this::commitFields), charset);
        writer = new PrintWriter(encoder, false);
      } else {
        writer = new PrintWriter(new FirstWriteWriter(super.getWriter(), this::commitFields), false);
      }
    }
    return writer;
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

  /** Delegates every call, runs a hook before anything can commit, and counts what was accepted. */
  static final class CountingStream extends ServletOutputStream {
    private final ServletOutputStream out;
    private final AtomicLong bytes;
    private final Runnable beforeCommit;

    /** A stream that counts into {@code bytes} (null: counts nothing), with no hook. */
    CountingStream(ServletOutputStream out, AtomicLong bytes) {
      this(out, bytes, () -> {});
    }

    CountingStream(ServletOutputStream out, AtomicLong bytes, Runnable beforeCommit) {
      this.out = out;
      this.bytes = bytes;
      this.beforeCommit = beforeCommit;
    }

    @Override
    public void write(int b) throws IOException {
      beforeCommit.run();
      out.write(b);
      if (bytes != null) {
        bytes.incrementAndGet();
      }
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      beforeCommit.run();
      out.write(b, off, len);
      if (bytes != null) {
        bytes.addAndGet(len);
      }
    }

    @Override
    public void flush() throws IOException {
      beforeCommit.run();
      out.flush();
    }

    @Override
    public void close() throws IOException {
      beforeCommit.run();
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
   * The container's writer, with a hook before the first write, flush or close. Every
   * {@link PrintWriter} method, {@code println} included, reaches one of these.
   */
  static final class FirstWriteWriter extends Writer {
    private final PrintWriter out;
    private final Runnable beforeCommit;

    FirstWriteWriter(PrintWriter out, Runnable beforeCommit) {
      this.out = out;
      this.beforeCommit = beforeCommit;
    }

    @Override
    public void write(int c) {
      beforeCommit.run();
      out.write(c);
    }

    @Override
    public void write(char[] cbuf, int off, int len) {
      beforeCommit.run();
      out.write(cbuf, off, len);
    }

    @Override
    public void write(String str, int off, int len) {
      beforeCommit.run();
      out.write(str, off, len);
    }

    @Override
    public void flush() throws IOException {
      beforeCommit.run();
      if (out.checkError()) { // flushes, and reports what the container's writer swallowed
        throw new IOException("the container's writer failed");
      }
    }

    @Override
    public void close() {
      beforeCommit.run();
      out.close();
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
