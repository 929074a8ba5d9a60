package dev.headroom.gateway.internal.config;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches the configuration file's directory and runs a reload when the file is written, created
 * or moved into place (editors and config managers often replace the file by a rename). A reload
 * that fails validation keeps the configuration in force, and one that fails in any other way is
 * logged and leaves the file watched. One daemon thread.
 */
public final class ConfigWatcher implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ConfigWatcher.class);
  private final WatchService service;
  private final Thread thread;

  private ConfigWatcher(WatchService service, Thread thread) {
    this.service = service;
    this.thread = thread;
  }

  /** Starts watching {@code file}, running {@code reload} each time it changes, until {@link #close}. */
  public static ConfigWatcher start(Path file, Runnable reload) {
    Path abs = file.toAbsolutePath();
    Path dir = abs.getParent();
    Path name = abs.getFileName();
    try {
      WatchService ws = FileSystems.getDefault().newWatchService();
      dir.register(ws, StandardWatchEventKinds.ENTRY_MODIFY, StandardWatchEventKinds.ENTRY_CREATE);
      Thread t = new Thread(() -> loop(ws, name, reload), "headroom-config-watcher");
      t.setDaemon(true);
      t.start();
      return new ConfigWatcher(ws, t);
    } catch (IOException e) {
      throw new IllegalStateException("cannot watch " + dir + " for configuration changes: " + e.getMessage(), e);
    }
  }

  private static void loop(WatchService ws, Path name, Runnable reload) {
    try {
      while (true) {
        WatchKey key = ws.take();
        boolean ours = false;
        for (WatchEvent<?> e : key.pollEvents()) {
          if (name.equals(e.context())) {
            ours = true;
          }
        }
        key.reset();
        if (ours) {
          try {
            reload.run();
          } catch (RuntimeException | Error e) {
            // Whatever a reload throws beyond a refused configuration (which the reload logs
            // itself), the watcher lives on: otherwise every later change of the file would be
            // ignored without a word while the gateway runs on the configuration before it.
            LOG.error("reloading the configuration failed, the previous configuration stays in force;"
                + " the file is still watched", e);
          }
        }
      }
    } catch (InterruptedException | ClosedWatchServiceException e) {
      LOG.debug("configuration watcher stopped");
    }
  }

  @Override
  public void close() {
    try {
      service.close();
    } catch (IOException e) {
      LOG.debug("closing the watch service failed", e);
    }
    thread.interrupt();
  }
}
