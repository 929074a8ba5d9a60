package dev.headroom.cli;

/**
 * SIGHUP handling through {@code sun.misc.Signal} (module jdk.unsupported), the only way a JVM can
 * observe it. Where the signal is unavailable (Windows), reload stays available through file
 * changes and the admin port.
 */
final class Signals {
  private Signals() {}

  static void onHangup(Runnable action) {
    try {
      sun.misc.Signal.handle(new sun.misc.Signal("HUP"), s -> action.run());
    } catch (IllegalArgumentException e) {
      // no SIGHUP on this platform
    }
  }
}
