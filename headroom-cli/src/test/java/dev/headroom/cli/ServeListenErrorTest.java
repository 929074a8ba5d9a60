package dev.headroom.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * {@code headroom serve} on an address another process holds: one line on standard error naming
 * the address and the option that moves it, exit status 4, and no stack trace anywhere (Netty's
 * bind failure is the gateway's {@code ListenException}).
 */
class ServeListenErrorTest {

  /** The command's run, and what the gateway logged meanwhile (to standard error). */
  private record Logged(ServeConfigLimitsTest.Run run, String log) {}

  private static Logged headroom(String... args) {
    PrintStream stderr = System.err;
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8));
    try {
      return new Logged(ServeConfigLimitsTest.headroom(args), log.toString(StandardCharsets.UTF_8));
    } finally {
      System.setErr(stderr);
    }
  }

  @Test
  void aListenPortInUseIsOneLineNamingTheAddressAndPort() throws Exception {
    try (ServerSocket held = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      int port = held.getLocalPort();
      Logged l = headroom("serve", "--port", String.valueOf(port), "--admin-port", "0", "--threads", "1");
      ServeConfigLimitsTest.Run r = l.run();
      assertThat(r.status()).isEqualTo(4);
      assertThat(r.out()).isEmpty();
      assertThat(r.err()).isEqualTo("headroom serve: listen: cannot listen on 127.0.0.1:" + port
          + ": Address already in use; choose another port with --port N (0 picks any free port)"
          + System.lineSeparator());
      assertThat(l.log()).doesNotContain("Exception").doesNotContain("\tat ");
    }
  }

  @Test
  void anAdminPortInUseNamesTheAdminOption() throws Exception {
    try (ServerSocket held = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      int port = held.getLocalPort();
      Logged l = headroom("serve", "--port", "0", "--admin-port", String.valueOf(port), "--threads", "1");
      ServeConfigLimitsTest.Run r = l.run();
      assertThat(r.status()).isEqualTo(4);
      assertThat(r.err()).isEqualTo("headroom serve: admin: cannot listen on 127.0.0.1:" + port
          + ": Address already in use; choose another port with --admin-port N (0 picks any free port)"
          + System.lineSeparator());
      assertThat(l.log()).doesNotContain("Exception").doesNotContain("\tat ");
    }
  }
}
