package dev.headroom.servlet.internal;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UnsupportedEncodingException;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;

/**
 * A request whose body the filter has read already (a vend call's envelope): the application reads
 * the same bytes again, through the stream or the reader. Written from one thread at a time.
 */
public final class ReplayedRequest extends HttpServletRequestWrapper {
  private final byte[] body;
  private boolean streamed;
  private boolean read;

  public ReplayedRequest(HttpServletRequest request, byte[] body) {
    super(request);
    this.body = body;
  }

  @Override
  public int getContentLength() {
    return body.length;
  }

  @Override
  public long getContentLengthLong() {
    return body.length;
  }

  @Override
  public ServletInputStream getInputStream() {
    if (read) {
      throw new IllegalStateException("getReader() was called already");
    }
    streamed = true;
    ByteArrayInputStream in = new ByteArrayInputStream(body);
    return new ServletInputStream() {
      @Override
      public int read() {
        return in.read();
      }

      @Override
      public int read(byte[] b, int off, int len) {
        return in.read(b, off, len);
      }

      @Override
      public boolean isFinished() {
        return in.available() == 0;
      }

      @Override
      public boolean isReady() {
        return true;
      }

      @Override
      public void setReadListener(ReadListener listener) {
        try {
          listener.onDataAvailable();
          listener.onAllDataRead();
        } catch (IOException e) {
          listener.onError(e);
        }
      }
    };
  }

  @Override
  public BufferedReader getReader() throws UnsupportedEncodingException {
    if (streamed) {
      throw new IllegalStateException("getInputStream() was called already");
    }
    read = true;
    String enc = getCharacterEncoding();
    Charset cs = enc == null ? StandardCharsets.UTF_8 : Charset.forName(enc);
    return new BufferedReader(new InputStreamReader(new ByteArrayInputStream(body), cs));
  }
}
