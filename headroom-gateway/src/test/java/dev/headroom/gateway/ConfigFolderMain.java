package dev.headroom.gateway;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A gateway started as {@code headroom serve} starts one, in a process of its own (so that its
 * working directory is the one a test chooses): the configuration file is the one argument; the
 * port is printed as {@code port N}; the gateway stops when standard input closes.
 */
public final class ConfigFolderMain {
  private ConfigFolderMain() {}

  public static void main(String[] args) throws Exception {
    Path file = Path.of(args[0]);
    try (Gateway g = Gateway.builder(GatewayConfig.load(file)).configFile(file).start()) {
      System.out.println("port " + g.address().getPort());
      System.out.flush();
      while (System.in.read() >= 0) {
        // wait for the test to close standard input
      }
    } catch (IOException e) {
      // standard input failed: stop as if it closed
    }
  }
}
