package dev.headroom.gateway.internal.proxy;

import dev.headroom.gateway.config.AccessLogSettings;
import dev.headroom.gateway.internal.accesslog.AccessLogWriter;
import dev.headroom.gateway.internal.accesslog.ReopenSignal;
import java.io.IOException;
import java.time.Clock;
import java.util.Optional;

/**
 * The gateway's access log ({@code accessLog}): one line per exchange, in the format the
 * configuration read at start chose (a reload does not change it). Each exchange keeps an
 * {@link ExchangeLog} of what happened to it; when it ends, the facts go as one {@link AccessRecord}
 * to the {@link AccessLogWriter}, whose thread formats and writes them: the event loop only copies
 * a few references and offers them to a bounded buffer. The line's time is the injected
 * {@link Clock}'s; durations are the gateway ticker's ({@link ProxyHandler#now}).
 *
 * <p>Off ({@link #OFF}) when the configuration has no {@code accessLog}: exchanges then keep no
 * log at all. Thread-safe.
 */
public final class AccessLog implements AutoCloseable {
  /** No access log. */
  public static final AccessLog OFF = new AccessLog(null, null, null);

  private final AccessLogSettings settings;
  private final AccessLogWriter writer;
  private final Clock clock;

  private AccessLog(AccessLogSettings settings, AccessLogWriter writer, Clock clock) {
    this.settings = settings;
    this.writer = writer;
    this.clock = clock;
  }

  /**
   * Starts the access log the configuration in force asks for ({@link #OFF} when none) and puts it
   * in {@code state}: its drops are counted in {@code headroom_access_log_dropped_total}, and
   * SIGUSR1 reopens its file ({@link ReopenSignal}).
   *
   * @param capacity the buffer's size in lines ({@link AccessLogWriter#DEFAULT_CAPACITY} in production)
   * @throws IOException when the file cannot be opened for appending
   */
  public static AccessLog start(GatewayState state, Clock clock, int capacity) throws IOException {
    Optional<AccessLogSettings> s = state.config().accessLog();
    if (s.isEmpty()) {
      return OFF;
    }
    AccessLogWriter w = AccessLogWriter.start(s.get().file(), capacity);
    AccessLog log = new AccessLog(s.get(), w, clock);
    state.metrics.accessLogDropped(w::dropped);
    ReopenSignal.add(w);
    state.accessLog = log;
    return log;
  }

  /** What one exchange keeps for its line, from {@code start} (the ticker's time) on. */
  ExchangeLog open(long start) {
    return writer == null ? ExchangeLog.NONE : new ExchangeLog(this, start);
  }

  AccessLogSettings settings() {
    return settings;
  }

  Clock clock() {
    return clock;
  }

  /** Hands a line over without blocking; dropped and counted when the buffer is full. */
  void offer(AccessRecord r) {
    writer.offer(r);
  }

  /** Closes and opens the file again (what SIGUSR1 does); nothing when off or writing to stdout. */
  public void reopen() {
    if (writer != null) {
      writer.reopen();
    }
  }

  /** Writes what is buffered and closes the file. */
  @Override
  public void close() {
    if (writer != null) {
      ReopenSignal.remove(writer);
      writer.close();
    }
  }
}
