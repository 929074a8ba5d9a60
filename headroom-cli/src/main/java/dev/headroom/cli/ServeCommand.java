package dev.headroom.cli;

import dev.headroom.gateway.ConfigException;
import dev.headroom.gateway.Gateway;
import dev.headroom.gateway.GatewayConfig;
import dev.headroom.gateway.ListenException;
import io.netty.util.ResourceLeakDetector;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/**
 * {@code headroom serve}: runs the gateway until told to stop. Prints exactly one line
 * {@code listening on http://ADDRESS:PORT} ({@code https://} with {@code listen.tls}) on standard
 * output once it accepts connections, so that scripts can wait for it. SIGHUP reloads the
 * configuration file, as does a change to the file.
 *
 * <p>Stopping: SIGTERM, SIGINT or {@code POST /drain} on the admin port drain the gateway
 * ({@link Gateway#drain(java.time.Duration)}: no new connections, {@code Connection: close} on the
 * next response of each open one, exchanges in flight finish within {@code shutdown.drainTimeout}),
 * then the command returns 0. The signals are handled directly ({@link Signals#onTerminate}), so
 * that the JVM does not begin its own shutdown (whose exit status would be 143 or 130); the
 * shutdown hook drains the same way when the JVM stops for another reason. A second signal during
 * the drain forces the stop ({@link ServeStop}): status 5. Whatever ends serving, the gateway is
 * closed before the command returns, so that its event-loop threads never outlive it.
 *
 * <p>A listener that cannot open its address (in use, say) is one line on standard error naming
 * the address and the option that moves it, and status 4: never a stack trace.
 */
@Command(name = "serve",
    mixinStandardHelpOptions = true,
    versionProvider = Version.class,
    // One paragraph per string, no line breaks of our own: picocli wraps each to the usage width
    // (80 columns), so the help never breaks mid-line the way hand-wrapped lines did.
    description = {
        "Runs the gateway.",
        "",
        "Without --config it runs the built-in sample configuration: the in-memory store, a demo upstream "
            + "started in-process on a loopback port, and three policies (a per-IP burst, a daily quota, a "
            + "concurrency limit) on GET /hello and GET|POST /items/{id}, with cached copies under /cached/, "
            + "plans at /pricing and the limits page at /docs/limits.",
        "",
        "Once it accepts connections it prints one line: listening on http://ADDRESS:PORT (https:// when "
            + "listen.tls is set).",
        "",
        "SIGHUP, a change to the configuration file, or POST /reload on the admin port reloads the "
            + "configuration without dropping requests in flight or resetting unchanged policies.",
        "",
        "SIGTERM, SIGINT or POST /drain on the admin port drains the gateway: it refuses new connections, "
            + "closes each open one after its request in flight, waits up to shutdown.drainTimeout "
            + "(default 30s), then exits. GET /ready on the admin port is 503 meanwhile. A second SIGTERM or "
            + "SIGINT during the drain stops at once: exchanges still in flight are cut.",
        "",
        "Exit status: 0 after a clean stop, 1 when stopping failed (the log says why), 2 for a bad command "
            + "line, 3 for a bad configuration, 4 when an address cannot be listened on, 5 after a stop forced "
            + "by a second signal."},
    exitCodeOnInvalidInput = 2)
final class ServeCommand implements Callable<Integer> {
  /** Progress and events go to the log, in the gateway's one format (simplelogger.properties). */
  private static final Logger LOG = LoggerFactory.getLogger(ServeCommand.class);

  @Option(names = {"-c", "--config"}, paramLabel = "FILE",
      description = "The YAML configuration file; its keys are described by the JSON Schema "
          + "headroom-config.schema.json. Default: the built-in sample.")
  Path config;

  @Option(names = {"-p", "--port"}, paramLabel = "N",
      description = "The port to listen on, overriding listen.port; 0 picks any free port.")
  Integer port;

  @Option(names = "--admin-port", paramLabel = "N",
      description = "The admin port, overriding admin.port; 0 picks any free port.")
  Integer adminPort;

  @Option(names = "--threads", paramLabel = "N",
      description = "Event-loop threads. Default: the number of processors.")
  Integer threads;

  @Option(names = "--max-config-bytes", paramLabel = "SIZE", converter = ByteSize.class,
      description = "The largest configuration file read, at start and on every reload, in bytes, KiB or MiB "
          + "(such as 2MiB); a larger one is refused before it is parsed. Default: 1MiB; at most 64MiB.")
  long maxConfigBytes = GatewayConfig.DEFAULT_MAX_BYTES;

  @Option(names = "--no-watch", description = "Do not reload when the configuration file, or a file of "
      + "listen.tls, changes (SIGHUP still reloads the configuration).")
  boolean noWatch;

  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws InterruptedException {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    if (port != null && (port < 0 || port > 65535)) {
      throw new CommandLine.ParameterException(spec.commandLine(),
          "--port: " + port + " is not valid; expected a port from 0 to 65535");
    }
    if (adminPort != null && (adminPort < 0 || adminPort > 65535)) {
      throw new CommandLine.ParameterException(spec.commandLine(),
          "--admin-port: " + adminPort + " is not valid; expected a port from 0 to 65535");
    }
    GatewayConfig cfg;
    try {
      cfg = config == null ? GatewayConfig.sample() : GatewayConfig.load(config, maxConfigBytes);
    } catch (ConfigException e) {
      err.println(e.getMessage());
      err.flush();
      return 3;
    }
    if (System.getProperty("io.netty.leakDetection.level") == null
        && System.getProperty("io.netty.leakDetectionLevel") == null) {
      // The gateway releases every buffer it is handed (the end-to-end tests run with leak
      // detection on); in production the sampled stack traces and wrapped buffers cost CPU on
      // every request. -Dio.netty.leakDetection.level=simple (or paranoid) turns it back on.
      ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
    }
    if (port != null) {
      cfg = cfg.withListenPort(port);
    }
    if (adminPort != null) {
      cfg = cfg.withAdminPort(adminPort);
    }
    Gateway.Builder b = Gateway.builder(cfg).watchFile(!noWatch).maxConfigBytes(maxConfigBytes);
    if (config != null) {
      b.configFile(config);
    }
    if (threads != null) {
      b.threads(threads);
    }
    Gateway gateway;
    try {
      gateway = b.start();
    } catch (ConfigException e) {
      err.println(e.getMessage());
      err.flush();
      return 3;
    } catch (ListenException e) {
      err.println("headroom serve: " + e.getMessage() + "; choose another port with "
          + (e.setting().equals("admin") ? "--admin-port" : "--port") + " N (0 picks any free port)");
      err.flush();
      return 4;
    }
    try {
      return serve(gateway, out);
    } finally {
      // whatever ended serving (an error included), the event loops end: their threads are not
      // daemons and would keep the JVM alive (issue 36); a close already done does nothing
      try {
        gateway.close();
      } catch (RuntimeException | Error e) {
        LOG.error("closing the gateway failed (each part's failure is logged above): {}", e.toString());
      }
    }
  }

  /** Serves until a stop is asked for ({@link ServeStop}), then drains; returns the exit status. */
  private static int serve(Gateway gateway, PrintWriter out) throws InterruptedException {
    ServeStop stop = new ServeStop(gateway);
    if (!Signals.onTerminate(stop::signal)) {
      LOG.warn("SIGTERM and SIGINT cannot be handled here; the shutdown hook drains the gateway instead");
    }
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      if (stop.claimForShutdownHook()) {
        drain(gateway, null); // the JVM stops for another reason than the signals handled above
      } // else the command's thread stops it; a hook waiting for that could hold the exit for ever
    }, "headroom-shutdown"));
    Signals.onHangup(() -> {
      try {
        gateway.reloadFromFile();
      } catch (ConfigException e) {
        LOG.error("reload refused, the previous configuration stays in force: {}", e.getMessage());
      }
    });
    InetSocketAddress a = gateway.address();
    gateway.adminAddress().ifPresent(admin ->
        LOG.info("admin on http://{}:{} (/dashboard, /health, /ready, /metrics, /config, /capacity, /reload, /drain)",
            host(admin), admin.getPort()));
    String scheme = gateway.config().listen().tls().isPresent() ? "https" : "http";
    out.println("listening on " + scheme + "://" + host(a) + ":" + a.getPort());
    out.flush();
    stop.await();
    boolean stopped = drain(gateway, stop);
    if (stop.forced()) {
      return ServeStop.FORCED;
    }
    return stopped ? 0 : 1;
  }

  /**
   * Drains the gateway (or joins the drain under way; {@code stop} is null in the shutdown hook) and
   * closes it; logs what had to be cut.
   * Returns whether it stopped without a failure: a failure (or an interrupt) is logged, and the
   * gateway is closed all the same ({@link Gateway#drain()} closes it whatever ended the drain).
   */
  private static boolean drain(Gateway gateway, ServeStop stop) {
    try {
      boolean all = gateway.drain();
      if (stop != null && stop.forced()) {
        LOG.warn("stopped by a second signal{}", all ? "" : ": exchanges still in flight were cut");
      } else if (all) {
        LOG.info("stopped: every exchange in flight finished");
      } else {
        LOG.warn("stopped: exchanges still in flight after shutdown.drainTimeout were cut");
      }
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      LOG.warn("stopped: interrupted while draining; exchanges still in flight were cut");
      return false;
    } catch (RuntimeException | Error e) {
      LOG.error("stopped after a failure: {}", e.toString(), e);
      return false;
    }
  }

  private static String host(InetSocketAddress a) {
    String h = a.getAddress().getHostAddress();
    return h.contains(":") ? "[" + h + "]" : h;
  }
}
