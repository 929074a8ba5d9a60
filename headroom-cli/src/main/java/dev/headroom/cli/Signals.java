package dev.headroom.cli;

/**
 * Signal handling through {@code sun.misc.Signal} (module jdk.unsupported), the only way a JVM can
 * observe SIGHUP, or act on SIGTERM and SIGINT other than by running its shutdown hooks and exiting
 * with status 143 or 130. Where a signal is unavailable (SIGHUP on Windows), the action stays
 * available otherwise: reload through file changes and the admin port, the stop through the
 * shutdown hook.
 */
final class Signals {
  private Signals() {}

  static void onHangup(Runnable action) {
    on("HUP", action);
  }

  /**
   * Runs {@code action} on SIGTERM and SIGINT instead of the JVM's own shutdown; returns whether
   * both handlers are in place.
   */
  static boolean onTerminate(Runnable action) {
    return on("TERM", action) & on("INT", action);
  }

  private static boolean on(String signal, Runnable action) {
    try {
      sun.misc.Signal.handle(new sun.misc.Signal(signal), s -> action.run());
      return true;
    } catch (IllegalArgumentException e) {
      return false; // no such signal on this platform, or the JVM keeps it (-Xrs)
    }
  }
}
