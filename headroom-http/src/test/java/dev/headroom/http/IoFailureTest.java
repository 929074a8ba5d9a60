package dev.headroom.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Failures in words, from real sockets and files: never a class name. */
class IoFailureTest {

  @TempDir Path dir;

  private static int closedPort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  @Test
  void aRefusedConnectionFromJavaNetHttpIsConnectionRefused() throws Exception {
    IOException e = null;
    try {
      HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + closedPort() + "/")).build(),
          HttpResponse.BodyHandlers.discarding());
    } catch (IOException x) {
      e = x;
    }
    assertThat(e).isInstanceOf(ConnectException.class);
    assertThat(IoFailure.inWords(e)).isEqualTo("connection refused");
  }

  @Test
  void aRefusedSocketIsConnectionRefused() throws Exception {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", closedPort()));
    } catch (IOException e) {
      assertThat(IoFailure.inWords(e)).isEqualTo("connection refused");
      return;
    }
    throw new AssertionError("the connection was accepted");
  }

  @Test
  void aMissingFileIsNoSuchFile() {
    try {
      Files.readString(dir.resolve("missing.key"));
    } catch (IOException e) {
      assertThat(e).isInstanceOf(NoSuchFileException.class);
      assertThat(IoFailure.inWords(e)).isEqualTo("no such file");
      return;
    }
    throw new AssertionError("the file was read");
  }

  @Test
  void aWrappedFailureIsReadFromItsCauseAndAClassNameIsNeverShown() {
    assertThat(IoFailure.inWords(new IOException("wrapped", new ConnectException()))).isEqualTo("connection refused");
    assertThat(IoFailure.inWords(new IOException("java.io.IOException: boom"))).isEqualTo("an input/output error");
    assertThat(IoFailure.inWords(new IOException())).isEqualTo("an input/output error");
    assertThat(IoFailure.inWords(new IOException("the disk is full"))).isEqualTo("the disk is full");
  }
}
