package dev.headroom.servlet.internal;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The writer encodes each write at once, joining a surrogate pair split across writes. */
class LimitedResponseTest {

  static final class Sink extends ServletOutputStream {
    final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

    @Override
    public void write(int b) {
      bytes.write(b);
    }

    @Override
    public boolean isReady() {
      return true;
    }

    @Override
    public void setWriteListener(WriteListener listener) {}
  }

  @Test
  void countsEncodedBytesAndKeepsSplitSurrogatePairsWhole() throws Exception {
    Sink sink = new Sink();
    AtomicLong count = new AtomicLong();
    LimitedResponse.CountingStream counted = new LimitedResponse.CountingStream(sink, count);
    LimitedResponse.EncodingWriter w = new LimitedResponse.EncodingWriter(counted, StandardCharsets.UTF_8);
    String clef = "\uD834\uDD1E"; // U+1D11E, four bytes in UTF-8
    w.write("é" + clef.charAt(0));
    assertThat(count.get()).isEqualTo(2); // é is written; the high surrogate waits
    w.write(clef.charAt(1) + "x");
    assertThat(count.get()).isEqualTo(7);
    assertThat(sink.bytes.toString(StandardCharsets.UTF_8)).isEqualTo("é" + clef + "x");
  }
}
