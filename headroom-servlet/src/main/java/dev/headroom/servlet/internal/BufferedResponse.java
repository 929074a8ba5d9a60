package dev.headroom.servlet.internal;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;

/**
 * The response of a vend call while the application writes it: status and fields go to the real
 * response, the content into memory, so that the filter can insert the extension data before
 * anything is sent (seed 003). Nothing is committed until the filter writes the body; a
 * {@code Content-Length} the application sets is left for the filter to set. Written from one
 * thread at a time (the application's request thread).
 */
public final class BufferedResponse extends HttpServletResponseWrapper {
  private final ByteArrayOutputStream content = new ByteArrayOutputStream();
  private ServletOutputStream stream;
  private PrintWriter writer;

  public BufferedResponse(HttpServletResponse response) {
    super(response);
  }

  /** The content written so far (the writer flushed first). */
  public byte[] content() {
    if (writer != null) {
      writer.flush();
    }
    return content.toByteArray();
  }

  @Override
  public ServletOutputStream getOutputStream() {
    if (writer != null) {
      throw new IllegalStateException("getWriter() was called already");
    }
    if (stream == null) {
      stream = new ServletOutputStream() {
        @Override
        public void write(int b) {
          content.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) {
          content.write(b, off, len);
        }

        @Override
        public boolean isReady() {
          return true;
        }

        @Override
        public void setWriteListener(WriteListener listener) {
          try {
            listener.onWritePossible();
          } catch (IOException e) {
            listener.onError(e);
          }
        }
      };
    }
    return stream;
  }

  @Override
  public PrintWriter getWriter() {
    if (stream != null) {
      throw new IllegalStateException("getOutputStream() was called already");
    }
    if (writer == null) {
      String enc = getCharacterEncoding();
      Charset cs = enc == null ? StandardCharsets.UTF_8 : Charset.forName(enc);
      writer = new PrintWriter(new OutputStreamWriter(content, cs), false);
    }
    return writer;
  }

  @Override
  public void setContentLength(int len) {
    // the filter sets the length of what it sends
  }

  @Override
  public void setContentLengthLong(long len) {
    // as above
  }

  @Override
  public void flushBuffer() {
    // nothing is sent before the filter writes the whole body
  }

  @Override
  public boolean isCommitted() {
    return false;
  }

  @Override
  public void resetBuffer() {
    if (writer != null) {
      writer.flush();
    }
    content.reset();
  }

  @Override
  public void reset() {
    super.reset();
    resetBuffer();
  }

  @Override
  public void sendError(int sc) {
    setStatus(sc);
  }

  @Override
  public void sendError(int sc, String msg) {
    setStatus(sc);
  }
}
