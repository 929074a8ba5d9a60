package dev.headroom.gateway.internal.accesslog;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes access log lines off the event loops. An event loop {@link #offer offers} an
 * {@link Entry} (the facts of one exchange, not yet formatted) to a bounded
 * {@link ArrayBlockingQueue}; one thread of its own takes entries, renders each into its line and
 * writes it, flushing whenever the queue runs empty. A full buffer never blocks nor slows a request:
 * the entry is dropped and counted ({@link #dropped()}, {@code headroom_access_log_dropped_total}).
 *
 * <p>State: the queue ({@link #DEFAULT_CAPACITY} entries, about a second of a busy gateway, unless
 * told otherwise), the count of dropped entries, a flag asking the thread to reopen the file, and
 * the open stream, touched by the writer thread only. {@link #reopen()} (SIGUSR1, see
 * {@link ReopenSignal}) sets the flag and wakes the thread, which closes the file and opens the
 * path again: after logrotate renamed the file, lines go to a new file of the configured name.
 * Standard output is never closed nor reopened.
 *
 * <p>A line that cannot be written (a full disk) is counted as dropped and logged once per
 * failure streak; the thread goes on with the next one.
 *
 * <p>Thread-safe.
 */
public final class AccessLogWriter implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(AccessLogWriter.class);

  /** The buffer's size unless told otherwise. */
  public static final int DEFAULT_CAPACITY = 8192;

  /** The facts of one exchange, rendered into its line on the writer thread. */
  @FunctionalInterface
  public interface Entry {
    /** The line, without its line end. */
    String line();
  }

  /** Wakes the thread without writing anything (a reopen, the close). */
  private static final Entry WAKE = () -> null;

  private final Optional<Path> file;
  private final ArrayBlockingQueue<Entry> queue;
  private final AtomicLong dropped = new AtomicLong();
  private final AtomicBoolean reopen = new AtomicBoolean();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final Thread thread;
  /** Written by the thread only. */
  private Writer out;
  private boolean failing;

  /** Starts a writer to {@code file} (appended to; standard output when empty) with a buffer of {@link #DEFAULT_CAPACITY}. */
  public static AccessLogWriter start(Optional<Path> file) throws IOException {
    return start(file, DEFAULT_CAPACITY);
  }

  /** As {@link #start(Optional)} with a buffer of {@code capacity} entries. */
  public static AccessLogWriter start(Optional<Path> file, int capacity) throws IOException {
    AccessLogWriter w = new AccessLogWriter(file, capacity);
    w.thread.start();
    return w;
  }

  private AccessLogWriter(Optional<Path> file, int capacity) throws IOException {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity: " + capacity + " is not valid; expected 1 or more");
    }
    this.file = file;
    this.queue = new ArrayBlockingQueue<>(capacity);
    this.out = open(); // at start, so that a path that cannot be written fails the start
    this.thread = new Thread(this::run, "headroom-access-log");
    thread.setDaemon(true);
  }

  /** Hands an entry over without blocking; false (and counted) when the buffer is full. */
  public boolean offer(Entry e) {
    if (closed.get() || !queue.offer(e)) {
      dropped.incrementAndGet();
      return false;
    }
    return true;
  }

  /** Entries dropped so far: the buffer was full, or the line could not be written. */
  public long dropped() {
    return dropped.get();
  }

  /** Asks the thread to close and open the file again (logrotate); nothing for standard output. */
  public void reopen() {
    reopen.set(true);
    queue.offer(WAKE); // a full buffer wakes the thread anyway
  }

  /** Writes what is buffered, then stops the thread and closes the file; waits at most 5 seconds. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    try {
      queue.offer(WAKE, 5, TimeUnit.SECONDS);
      thread.join(TimeUnit.SECONDS.toMillis(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    thread.interrupt();
  }

  private void run() {
    try {
      while (true) {
        Entry e = queue.take();
        if (reopen.getAndSet(false) && file.isPresent()) {
          reopenFile();
        }
        if (e != WAKE) {
          write(e);
        }
        if (queue.isEmpty()) {
          flush();
          if (closed.get()) {
            break;
          }
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      flush();
      if (file.isPresent()) {
        closeQuietly();
      }
    }
  }

  private void write(Entry e) {
    try {
      String line = e.line();
      out.write(line);
      out.write('\n');
      failing = false;
    } catch (IOException | RuntimeException x) {
      dropped.incrementAndGet();
      if (!failing) {
        LOG.error("access log: cannot write a line to {}; dropping lines until it can: {}",
            file.map(Path::toString).orElse("stdout"), x.toString());
        failing = true;
      }
    }
  }

  private void flush() {
    try {
      out.flush();
    } catch (IOException x) {
      if (!failing) {
        LOG.error("access log: cannot write to {}: {}", file.map(Path::toString).orElse("stdout"), x.toString());
        failing = true;
      }
    }
  }

  private void reopenFile() {
    flush();
    closeQuietly();
    try {
      out = open();
      LOG.info("access log: reopened {}", file.get());
    } catch (IOException x) {
      LOG.error("access log: cannot reopen {}; lines are dropped until the next reopen: {}", file.get(), x.toString());
      out = Writer.nullWriter();
      failing = true;
    }
  }

  private void closeQuietly() {
    try {
      out.close();
    } catch (IOException x) {
      LOG.warn("access log: closing {} failed: {}", file.get(), x.toString());
    }
  }

  private Writer open() throws IOException {
    OutputStream s = file.isPresent()
        ? Files.newOutputStream(file.get(), StandardOpenOption.CREATE, StandardOpenOption.APPEND,
            StandardOpenOption.WRITE)
        : new FileOutputStream(FileDescriptor.out);
    return new OutputStreamWriter(s, StandardCharsets.UTF_8);
  }
}
