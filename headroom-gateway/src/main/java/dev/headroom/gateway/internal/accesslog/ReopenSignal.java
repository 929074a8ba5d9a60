package dev.headroom.gateway.internal.accesslog;

import java.util.Set;
import java.util.concurrent.CopyOnWriteArraySet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sun.misc.Signal;

/**
 * SIGUSR1 reopens every access log file of the process, as logrotate expects after it renamed
 * them ({@code postrotate kill -USR1 <pid>}). The handler is installed once per process through
 * {@code sun.misc.Signal} (module {@code jdk.unsupported}, present in every OpenJDK build; the JDK
 * has no supported API for signals); where it cannot be installed (a JVM started with {@code -Xrs},
 * a platform without SIGUSR1) that is logged once and the file is reopened only by a restart.
 * Thread-safe.
 */
public final class ReopenSignal {
  private static final Logger LOG = LoggerFactory.getLogger(ReopenSignal.class);
  private static final Set<AccessLogWriter> WRITERS = new CopyOnWriteArraySet<>();
  private static boolean installed;
  private static boolean failed;

  private ReopenSignal() {}

  /** Reopens {@code w} on SIGUSR1 until {@link #remove}d. */
  public static synchronized void add(AccessLogWriter w) {
    WRITERS.add(w);
    if (installed || failed) {
      return;
    }
    try {
      Signal.handle(new Signal("USR1"), s -> reopenAll());
      installed = true;
    } catch (IllegalArgumentException | UnsupportedOperationException | LinkageError e) {
      failed = true;
      LOG.warn("access log: cannot handle SIGUSR1 ({}); the log file is reopened only by a restart", e.toString());
    }
  }

  /** Stops reopening {@code w}. */
  public static void remove(AccessLogWriter w) {
    WRITERS.remove(w);
  }

  /** What SIGUSR1 does: every registered writer reopens its file. */
  static void reopenAll() {
    WRITERS.forEach(AccessLogWriter::reopen);
  }
}
