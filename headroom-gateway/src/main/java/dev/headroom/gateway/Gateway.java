package dev.headroom.gateway;

import dev.headroom.InMemoryStore;
import dev.headroom.Store;
import dev.headroom.Ticker;
import dev.headroom.gateway.config.LeasingSettings;
import dev.headroom.gateway.internal.EventLoops;
import dev.headroom.gateway.internal.GatewayServer;
import dev.headroom.gateway.internal.Timers;
import dev.headroom.redis.FailurePolicy;
import dev.headroom.redis.Leasing;
import dev.headroom.redis.LeasingStore;
import dev.headroom.redis.RedisStore;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

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
  private final GatewayServer server;
  private final Store ownedStore;
  private final EventLoops loops;
  private final AtomicBoolean closed = new AtomicBoolean();

  private Gateway(GatewayServer server, Store ownedStore, EventLoops loops) {
    this.server = server;
    this.ownedStore = ownedStore;
    this.loops = loops;
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

  /** Stops listening and releases the event loops; closing again has no further effect. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    server.close();
    if (ownedStore != null) {
      // a store built from the configuration is the gateway's; its Redis connection runs on the
      // event loops, so it closes before them
      ownedStore.close();
    }
    loops.close();
  }

  /** Configures a {@link Gateway}. */
  public static final class Builder {
    private final GatewayConfig config;
    private Ticker ticker = Ticker.system();
    private Timers timers = Timers.on(Ticker.system());
    private Store store;
    private Path file;
    private boolean watch = true;
    private long maxConfigBytes = GatewayConfig.DEFAULT_MAX_BYTES;
    private int threads = Runtime.getRuntime().availableProcessors();

    private Builder(GatewayConfig config) {
      this.config = Objects.requireNonNull(config, "config");
    }

    /** The clock; exists so that tests can drive time with {@code ManualTicker}. */
    public Builder ticker(Ticker ticker) {
      this.ticker = Objects.requireNonNull(ticker, "ticker");
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

    /** Whether changes to the configuration file reload it; on by default when there is a file. */
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
     */
    public Gateway start() throws ConfigException, InterruptedException {
      EventLoops loops = EventLoops.start(threads);
      Store s;
      try {
        s = store != null ? store : storeFor(config, loops);
      } catch (RuntimeException | ConfigException e) {
        loops.close();
        throw e;
      }
      try {
        return new Gateway(GatewayServer.start(config, s, ticker, timers, Optional.ofNullable(file),
            maxConfigBytes, watch, loops),
            store == null ? s : null, loops);
      } catch (RuntimeException | InterruptedException e) {
        if (store == null) {
          s.close();
        }
        loops.close();
        throw e;
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
