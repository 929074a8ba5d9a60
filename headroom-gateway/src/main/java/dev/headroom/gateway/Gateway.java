package dev.headroom.gateway;

import dev.headroom.InMemoryStore;
import dev.headroom.Store;
import dev.headroom.Ticker;
import dev.headroom.gateway.config.LeasingSettings;
import dev.headroom.gateway.internal.CloseSequence;
import dev.headroom.gateway.internal.EventLoops;
import dev.headroom.gateway.internal.GatewayServer;
import dev.headroom.gateway.internal.Timers;
import dev.headroom.gateway.internal.accesslog.AccessLogWriter;
import dev.headroom.gateway.internal.proxy.AccessLog;
import dev.headroom.redis.FailurePolicy;
import dev.headroom.redis.Leasing;
import dev.headroom.redis.LeasingStore;
import dev.headroom.redis.RedisStore;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Headroom gateway: a reverse proxy that enforces the configuration's quota policies on each
 * route, tells callers where they stand (RateLimit fields, structured refusals, the discovery
 * document at {@code /.well-known/limits} and {@code /api/limits}), and serves health, metrics and
 * the configuration on an admin listener.
 *
 * <pre>{@code
 * try (Gateway g = Gateway.builder(GatewayConfig.load(path)).configFile(path).start()) {
 *   System.out.println("listening on http://" + g.address());
 * }
 * }</pre>
 *
 * <p>Thread-safe.
 */
public final class Gateway implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Gateway.class);
  /**
   * How much longer than its timeout {@link #drain(Duration)} waits for a drain to end before it
   * closes regardless: the drain ends by a timer on an event loop, which a stuck or dead loop never
   * runs, and a stop must end.
   */
  private static final Duration DRAIN_GRACE = Duration.ofSeconds(10);

  private final GatewayServer server;
  private final Store ownedStore;
  private final EventLoops loops;
  private final AccessLog accessLog;
  /** Guarded by this. */
  private boolean closed;
  /**
   * The close's steps, made at start: a close must not need a class loaded for the first time (a
   * jar replaced under the running process, by a rebuild, fails such loads).
   */
  private final CloseSequence closing = new CloseSequence("the gateway");

  private Gateway(GatewayServer server, Store ownedStore, EventLoops loops, AccessLog accessLog) {
    this.server = server;
    this.ownedStore = ownedStore;
    this.loops = loops;
    this.accessLog = accessLog;
  }

  /** Starts a builder for the given configuration. */
  public static Builder builder(GatewayConfig config) {
    return new Builder(config);
  }

  /** The address the proxy listens on (the port resolved when 0 was asked). */
  public InetSocketAddress address() {
    return server.address();
  }

  /** The admin listener's address, unless disabled. */
  public Optional<InetSocketAddress> adminAddress() {
    return server.adminAddress();
  }

  /** The configuration in force. */
  public GatewayConfig config() {
    return server.config();
  }

  /**
   * Swaps in a new configuration without dropping requests in flight or resetting counters of
   * unchanged policies. Changes to listen, admin and store take effect only after a restart.
   */
  public void reload(GatewayConfig next) throws InterruptedException {
    server.reload(next);
  }

  /**
   * Reads the configuration file again (what SIGHUP, file changes and {@code POST /reload} do),
   * within the builder's {@link Builder#maxConfigBytes size bound}.
   * @throws ConfigException when the file is not a valid configuration; the one in force stays
   */
  public void reloadFromFile() throws ConfigException {
    server.reloadFromFile();
  }

  /**
   * Lowers a policy's capacity at run time to {@code factor} ({@code 0 < factor <= 1}; 1 restores it);
   * refusals under a reduced policy are 503 temporary-reduced-capacity.
   */
  public void setCapacity(String policy, double factor) {
    server.setCapacity(policy, factor);
  }

  /**
   * Closes the access log file and opens it again under its configured name (what SIGUSR1 does,
   * for logrotate); nothing when the log is off or goes to standard output.
   */
  public void reopenLogs() {
    accessLog.reopen();
  }

  /**
   * Stops gracefully, waiting up to {@code shutdown.drainTimeout} of the configuration in force;
   * see {@link #drain(Duration)}.
   */
  public boolean drain() throws InterruptedException {
    return drain(server.config().shutdown().drainTimeout());
  }

  /**
   * Stops gracefully, then closes: the proxy listener closes (new connections are refused), the
   * next response of each open connection carries {@code Connection: close} (RFC 9112 section 9.6)
   * and idle keep-alive connections close, exchanges in flight finish until {@code timeout} has
   * passed, and those still running then are cut. {@code GET /ready} on the admin port is 503
   * meanwhile. A drain already under way ({@code POST /drain}) is joined, not restarted. A drain
   * that has not ended 10 seconds after {@code timeout} (its event loops stuck or gone) is given up
   * on, and the gateway closed all the same.
   *
   * @return {@code true} when every exchange in flight finished within {@code timeout}
   */
  public boolean drain(Duration timeout) throws InterruptedException {
    Objects.requireNonNull(timeout, "timeout");
    boolean all;
    try {
      all = server.drain(timeout).toCompletableFuture().get(boundNanos(timeout), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      // the drain's own timer (on an event loop) should have ended it: its loop is stuck or gone
      LOG.warn("the drain did not end within {} and {} more; closing", timeout, DRAIN_GRACE);
      all = false;
    } catch (ExecutionException e) {
      IllegalStateException failed = new IllegalStateException("the drain failed", e.getCause());
      closeAfter(failed);
      throw failed;
    } catch (InterruptedException | RuntimeException | Error e) {
      closeAfter(e); // whatever ended the drain, the event loops end too
      throw e;
    }
    close();
    return all;
  }

  /** How long {@link #drain(Duration)} waits for a drain: its timeout and the grace, saturated. */
  private static long boundNanos(Duration timeout) {
    try {
      return timeout.plus(DRAIN_GRACE).toNanos();
    } catch (ArithmeticException tooLong) {
      return Long.MAX_VALUE;
    }
  }

  /** Closes after {@code failure} ended a drain; a failure of the close is attached to it. */
  private void closeAfter(Throwable failure) {
    try {
      close();
    } catch (RuntimeException | Error e) {
      failure.addSuppressed(e);
    }
  }

  /**
   * Completes when a drain is over, however it began ({@link #drain(Duration)}, or
   * {@code POST /drain} on the admin port, after which the host closes the gateway), or when the
   * gateway is closed: {@code true} when no exchange in flight had to be cut.
   */
  public CompletionStage<Boolean> drained() {
    return server.drained();
  }

  /**
   * Stops listening and releases the event loops at once, cutting exchanges in flight (see
   * {@link #drain(Duration)} for a graceful stop). Every part is closed whatever became of the
   * others: a part whose close fails is logged and the rest still close, the event loops (whose
   * threads would keep the JVM alive) always; the first failure is then thrown. A call while
   * another thread closes waits for that close to end; closing again has no further effect.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    CloseSequence steps = closing;
    steps.run("the listeners and upstreams", server::close);
    if (ownedStore != null) {
      // a store built from the configuration is the gateway's; its Redis connection runs on the
      // event loops, so it closes before them
      steps.run("the store", ownedStore::close);
    }
    steps.run("the event loops", loops::close);
    // last: the event loops' shutdown closes the client connections still open, and the exchanges
    // it ends (or that ended a moment after their client had the response) are still written, and
    // their spans sent
    steps.run("the access log", accessLog::close);
    steps.run("the telemetry", server::closeTelemetry);
    steps.rethrow();
  }

  /** Whether the event loops have ended (their threads gone); for tests of the close. */
  boolean eventLoopsTerminated() {
    return loops.terminated();
  }

  /** Configures a {@link Gateway}. */
  public static final class Builder {
    private final GatewayConfig config;
    private Ticker ticker = Ticker.system();
    private Timers timers = Timers.on(Ticker.system());
    private Store store;
    /** Whether the gateway closes {@link #store} (always when it builds the store itself). */
    private boolean storeOwned;
    private Path file;
    private boolean watch = true;
    private long maxConfigBytes = GatewayConfig.DEFAULT_MAX_BYTES;
    private int threads = Runtime.getRuntime().availableProcessors();
    private Clock clock = Clock.systemUTC();
    private int accessLogCapacity = AccessLogWriter.DEFAULT_CAPACITY;

    private Builder(GatewayConfig config) {
      this.config = Objects.requireNonNull(config, "config");
    }

    /** The clock; exists so that tests can drive time with {@code ManualTicker}. */
    public Builder ticker(Ticker ticker) {
      this.ticker = Objects.requireNonNull(ticker, "ticker");
      return this;
    }

    /** The wall clock the access log's times are read from; UTC by default. */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** The access log's buffer in lines; package-private, for tests that fill it. */
    Builder accessLogCapacity(int lines) {
      this.accessLogCapacity = lines;
      return this;
    }

    /**
     * The client connections' timers (timeouts.idle, timeouts.response); package-private, for
     * tests that drive timeouts in virtual time. By default they run on {@link Ticker#system()},
     * whatever {@link #ticker} is: a test that drives quotas with a manual ticker keeps real
     * timeouts unless it passes timers too.
     */
    Builder timers(Timers timers) {
      this.timers = Objects.requireNonNull(timers, "timers");
      return this;
    }

    /**
     * The store; by default one is built from the configuration's {@code store} section (and
     * kept for the gateway's whole life, across reloads).
     */
    public Builder store(Store store) {
      this.store = Objects.requireNonNull(store, "store");
      this.storeOwned = false; // the caller's: it closes the store
      return this;
    }

    /**
     * A store the gateway closes as its own, as it does one built from the configuration;
     * package-private, for tests of the close.
     */
    Builder ownedStore(Store store) {
      this.store = Objects.requireNonNull(store, "store");
      this.storeOwned = true;
      return this;
    }

    /** The file the configuration came from: reloads read it again. */
    public Builder configFile(Path file) {
      this.file = Objects.requireNonNull(file, "file");
      return this;
    }

    /**
     * The size bound reloads read the configuration file with ({@link GatewayConfig#load(Path, long)});
     * {@link GatewayConfig#DEFAULT_MAX_BYTES} by default. A reload of a larger file is refused and
     * the configuration in force stays.
     */
    public Builder maxConfigBytes(long maxBytes) {
      if (maxBytes < 1 || maxBytes > GatewayConfig.MAX_BYTES_CEILING) {
        throw new IllegalArgumentException("maxConfigBytes: " + maxBytes + " is not valid; expected 1 to "
            + GatewayConfig.MAX_BYTES_CEILING);
      }
      this.maxConfigBytes = maxBytes;
      return this;
    }

    /**
     * Whether changes to the configuration file reload it, and changes to the files of
     * {@code listen.tls} (certificate, key, client CA) replace the certificate new connections
     * use; on by default.
     */
    public Builder watchFile(boolean watch) {
      this.watch = watch;
      return this;
    }

    /** Event-loop threads; the number of processors by default. */
    public Builder threads(int threads) {
      if (threads < 1) {
        throw new IllegalArgumentException("threads: " + threads + " is not valid; expected 1 or more");
      }
      this.threads = threads;
      return this;
    }

    /**
     * Starts the gateway; returns once it accepts connections.
     * @throws ConfigException when the configured store cannot be built
     * @throws ListenException when the proxy or admin listener cannot open its address (in use, say)
     */
    public Gateway start() throws ConfigException, InterruptedException {
      EventLoops loops = EventLoops.start(threads);
      Store s;
      try {
        s = store != null ? store : storeFor(config, loops);
      } catch (RuntimeException | ConfigException e) {
        new CloseSequence("a gateway that did not start").run("the event loops", loops::close);
        throw e;
      }
      boolean owned = store == null || storeOwned;
      try {
        GatewayServer server = GatewayServer.start(config, s, ticker, timers, Optional.ofNullable(file),
            maxConfigBytes, watch, loops);
        return new Gateway(server, owned ? s : null, loops, accessLog(server));
      } catch (RuntimeException | InterruptedException | ConfigException e) {
        CloseSequence steps = new CloseSequence("a gateway that did not start");
        if (owned) {
          steps.run("the store", s::close);
        }
        steps.run("the event loops", loops::close);
        throw e; // what the close found is logged; this is why the start failed
      }
    }

    /** The access log the configuration asks for; a file that cannot be opened stops the start. */
    private AccessLog accessLog(GatewayServer server) throws ConfigException {
      try {
        return AccessLog.start(server.state(), clock, accessLogCapacity);
      } catch (IOException e) {
        server.close();
        throw new ConfigException(config.source(), List.of("accessLog.path: \""
            + config.accessLog().flatMap(a -> a.file()).map(Path::toString).orElse("stdout")
            + "\" cannot be opened for appending (" + e + "); expected a file the gateway may write"));
      }
    }

    /**
     * {@code store.leasing}: the Redis store wrapped in a {@link dev.headroom.redis.LeasingStore},
     * which owns it. Policies are leased by name, so that a reload or a capacity change (a new
     * policy of the same name) keeps them leased.
     */
    private Store leasing(RedisStore redis, LeasingSettings l) {
      Leasing.Builder b = Leasing.builder()
          .targetInterval(l.targetInterval()).maxFraction(l.maxFraction()).maxHold(l.maxHold())
          .idleReturn(l.idleReturn()).maxKeys(l.maxKeys()).ticker(ticker);
      if (l.policies().isEmpty()) {
        b.everyPolicy();
      } else {
        l.policies().forEach(b::policyNamed);
      }
      return LeasingStore.wrap(redis, b.build());
    }

    /**
     * The store the configuration names. A Redis store's client runs on the gateway's own event
     * loops ({@link EventLoops}): its replies are read where the requests they answer are served.
     */
    private Store storeFor(GatewayConfig c, EventLoops loops) throws ConfigException {
      return switch (c.store().type()) {
        case MEMORY -> InMemoryStore.builder().ticker(ticker).maxKeys(c.store().maxKeys()).build();
        case REDIS -> {
          // Redis TIME decides windows, unless a test drives time with its own ticker
          RedisStore.Builder b = RedisStore.builder().uri(c.store().uri().orElseThrow())
              .failurePolicy(c.store().failurePolicy()).decisionDeadline(c.store().decisionDeadline())
              .refusalMemory(c.store().refusalMemory()).clientResources(loops.lettuce());
          if (c.store().failurePolicy() == FailurePolicy.FALLBACK) {
            b.fallbackMaxKeys(c.store().maxKeys()); // the local store bounded as a memory store would be
          }
          c.store().keyPrefix().ifPresent(b::keyPrefix);
          c.store().replicaAcknowledgements().ifPresent(a -> b.replicaAcknowledgements(a.replicas(), a.timeout()));
          if (ticker != Ticker.system()) {
            b.ticker(ticker);
          }
          RedisStore redis = b.build();
          yield c.store().leasing().isPresent() ? leasing(redis, c.store().leasing().get()) : redis;
        }
      };
    }
  }
}
