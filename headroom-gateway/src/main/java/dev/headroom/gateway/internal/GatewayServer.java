package dev.headroom.gateway.internal;

import dev.headroom.Store;
import dev.headroom.Ticker;
import dev.headroom.enforcement.discovery.LimitsDiscoveryDocument;
import dev.headroom.gateway.ConfigException;
import dev.headroom.gateway.GatewayConfig;
import dev.headroom.gateway.ListenException;
import dev.headroom.gateway.config.Limits;
import dev.headroom.gateway.config.PlanSettings;
import dev.headroom.gateway.config.Policy;
import dev.headroom.gateway.config.Route;
import dev.headroom.gateway.config.Upstream;
import dev.headroom.gateway.internal.admin.AdminHandler;
import dev.headroom.gateway.internal.admin.Dashboard;
import dev.headroom.gateway.internal.admin.GatewayMetrics;
import dev.headroom.gateway.internal.admin.MeterClock;
import dev.headroom.gateway.internal.admin.Readiness;
import dev.headroom.gateway.internal.admin.StoreMetrics;
import dev.headroom.gateway.internal.config.ConfigSections;
import dev.headroom.gateway.internal.config.ConfigWatcher;
import dev.headroom.gateway.internal.h2.Http2Front;
import dev.headroom.gateway.internal.proxy.ClientTransport;
import dev.headroom.gateway.internal.proxy.ConfiguredGate;
import dev.headroom.gateway.internal.proxy.GatewayMessages;
import dev.headroom.gateway.internal.proxy.GatewayState;
import dev.headroom.gateway.internal.proxy.LimitsPage;
import dev.headroom.gateway.internal.proxy.ProxyHandler;
import dev.headroom.gateway.internal.proxy.RequestDecoder;
import dev.headroom.gateway.internal.proxy.RouteTable;
import dev.headroom.gateway.internal.proxy.Snapshot;
import dev.headroom.gateway.internal.proxy.UpstreamPool;
import dev.headroom.gateway.internal.proxy.VendRoutes;
import dev.headroom.gateway.internal.telemetry.Telemetry;
import dev.headroom.gateway.internal.tls.ListenerTls;
import dev.headroom.gateway.internal.tls.ProtocolPipelines;
import dev.headroom.redis.FailurePolicy;
import dev.headroom.redis.LeasingStore;
import dev.headroom.redis.RedisStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running gateway: Netty event loops, the proxy listener, the admin listener, demo upstreams,
 * the swap of configurations on reload, and the graceful stop ({@link Drain}). Use through
 * {@link dev.headroom.gateway.Gateway}.
 *
 * <p>Thread-safety: {@link #reload} and {@link #close} are synchronized; request handling reads the
 * current snapshot through a volatile field.
 */
public final class GatewayServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(GatewayServer.class);

  private final EventLoopGroup boss;
  private final EventLoopGroup workers;
  private final Class<? extends ServerChannel> serverChannel;
  private final Class<? extends Channel> clientChannel;
  private final GatewayState state;
  private final PrometheusMeterRegistry registry;
  /** Traces and metrics over OTLP; null when {@code telemetry} is off. */
  private final Telemetry telemetry;
  private final MeterClock meterClock;
  private final Map<String, DemoUpstream> demos = new HashMap<>();
  private final Optional<Path> file;
  /** The size bound reloads read {@link #file} with. */
  private final long maxConfigBytes;
  private Channel listener;
  private Channel admin;
  private Dashboard dashboard;
  private ConfigWatcher watcher;
  /** The listener's TLS when {@code listen.tls} is set; null for a cleartext listener. */
  private ListenerTls tls;
  /** Whether the TLS files are watched for changes (as the configuration file is). */
  private boolean watchTls;
  /** The plan resolver, kept across reloads while {@code plans.resolver} is unchanged. */
  private final PlanResolvers planResolvers;
  /** The open client connections and the graceful stop. */
  private final Drain drain = new Drain();
  /**
   * The Redis store when it fails closed: without a connection it cannot decide, so the gateway is
   * not ready ({@link #readiness}); null for any other store.
   */
  private final RedisStore failsClosed;

  private GatewayServer(GatewayConfig config, Store store, Ticker ticker, Timers timers, Optional<Path> file,
      long maxConfigBytes, EventLoops loops) {
    this.boss = loops.boss();
    this.workers = loops.workers();
    this.serverChannel = loops.serverChannel();
    this.clientChannel = loops.clientChannel();
    this.meterClock = new MeterClock();
    this.registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT,
        new PrometheusRegistry(), meterClock);
    meterClock.start(boss.next());
    // with telemetry on, every meter is registered in both the scraped registry and the OTLP one
    this.telemetry = config.telemetry().map(t -> Telemetry.start(t, config.service().name(), registry, meterClock))
        .orElse(null);
    MeterRegistry meters = telemetry == null ? registry : telemetry.meters();
    new JvmMemoryMetrics().bindTo(meters);
    // store.leasing wraps the Redis store: its meters are the wrapped store's, plus the leasing's
    Store central = store instanceof LeasingStore leasing ? leasing.delegate() : store;
    StoreMetrics.bind(central, meters);
    this.file = file;
    this.maxConfigBytes = maxConfigBytes;
    GatewayMetrics metrics = new GatewayMetrics(meters);
    if (central instanceof RedisStore redis) {
      metrics.redisStore(redis);
    }
    this.failsClosed = central instanceof RedisStore redis && redis.failurePolicy() == FailurePolicy.FAIL_CLOSED
        ? redis : null;
    if (store instanceof LeasingStore leasing) {
      metrics.leasingStore(leasing);
    }
    this.state = new GatewayState(store, ticker, timers, boss.next(), metrics, telemetry, null);
    this.planResolvers = new PlanResolvers(ticker);
  }

  /**
   * Starts listening; returns once both listeners accept connections. {@code ticker} decides
   * quotas, {@code timers} run the connections' timeouts (see {@link Timers}). The server runs on
   * {@code loops} and leaves them running when closed: they are the caller's, which closes the
   * store (whose Redis connection may run on them) before them.
   */
  public static GatewayServer start(GatewayConfig config, Store store, Ticker ticker, Timers timers,
      Optional<Path> file, long maxConfigBytes, boolean watchFile, EventLoops loops) throws InterruptedException {
    GatewayServer s = new GatewayServer(config, store, ticker, timers, file, maxConfigBytes, loops);
    try {
      s.state.swap(s.snapshot(config, Map.of()));
      s.watchTls = watchFile;
      s.bind(config);
      if (watchFile && file.isPresent()) {
        s.watcher = ConfigWatcher.start(file.get(), s::reloadQuietly);
      }
      return s;
    } catch (RuntimeException | InterruptedException e) {
      CloseSequence steps = new CloseSequence("a gateway that did not start");
      steps.run("the server", s::close);
      steps.run("the telemetry", s::closeTelemetry);
      throw e; // what the close found is logged; this is why the start failed
    }
  }

  private void bind(GatewayConfig config) throws InterruptedException {
    ClientPipelines pipelines = new ClientPipelines(config.limits(), config.listen().http2());
    if (config.listen().tls().isPresent()) {
      tls = ListenerTls.start(config.listen().tls().get(), pipelines.offered(), state.ticker(), watchTls);
    }
    ServerBootstrap b = new ServerBootstrap().group(boss, workers).channel(serverChannel)
        .option(ChannelOption.SO_BACKLOG, 1024)
        .childOption(ChannelOption.AUTO_READ, false)
        .childOption(ChannelOption.TCP_NODELAY, true)
        .childHandler(new ChannelInitializer<Channel>() {
          @Override
          protected void initChannel(Channel ch) {
            if (tls == null && config.listen().http2()) {
              // a cleartext port that speaks both: the preface or Upgrade: h2c switches to HTTP/2
              Http2Front.cleartext(ch.pipeline(), state, ClientTransport.PLAIN,
                  p -> pipelines.http1(ch, ClientTransport.PLAIN));
            } else if (tls == null) {
              pipelines.http1(ch, ClientTransport.PLAIN);
            } else {
              // the protocol's handlers join after the handshake, as ALPN chose (AlpnSwitch)
              tls.install(ch, pipelines, state.metrics(), state.timers(),
                  state.snapshot().config().timeouts().idle());
            }
            drain.track(ch);
          }
        });
    listener = listen(b, "listen", config.listen().host(), config.listen().port());
    if (config.admin().enabled()) {
      // its own timers on the ticker: the connections' timers (state.timers()) are for connections only
      dashboard = new Dashboard(state, registry, Timers.on(state.ticker()), boss.next());
      AdminHandler handler = new AdminHandler(state, state.timers(), registry, actions(), dashboard,
          config.admin().token());
      ServerBootstrap a = new ServerBootstrap().group(boss, workers).channel(serverChannel)
          .childHandler(new ChannelInitializer<Channel>() {
            @Override
            protected void initChannel(Channel ch) {
              ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(65536), handler);
            }
          });
      admin = listen(a, "admin", config.admin().host(), config.admin().port());
      dashboard.start();
    }
  }

  /**
   * The protocols a client connection may speak, each installed by one method: on a cleartext
   * listener HTTP/1.1 at once, on a TLS listener the protocol ALPN chose after the handshake.
   */
  private final class ClientPipelines implements ProtocolPipelines {
    private final Limits limits;
    private final boolean http2;

    ClientPipelines(Limits limits, boolean http2) {
      this.limits = limits;
      this.http2 = http2;
    }

    @Override
    public List<String> offered() {
      return http2 ? List.of(ApplicationProtocolNames.HTTP_2, ApplicationProtocolNames.HTTP_1_1)
          : List.of(ApplicationProtocolNames.HTTP_1_1);
    }

    /**
     * HTTP/1.1. Timeouts (idle, response) are the proxy handler's own timer: no IdleStateHandler,
     * whose listener on every write cost a promise and a notification per response. A decoder and
     * an encoder, not HttpServerCodec: that codec's encoder pairs each response with a request
     * method from a queue, and proxied responses bypass the encoder (they are written through its
     * context as bytes), which would unpair them.
     */
    @Override
    public void http1(Channel ch, ClientTransport transport) {
      ch.pipeline().addLast("decoder", new RequestDecoder(limits.maxRequestLineBytes(),
          limits.maxHeaderBytes(), 65536, state.metrics()));
      ch.pipeline().addLast(ProxyHandler.CODEC, new HttpResponseEncoder());
      ProxyHandler proxy = new ProxyHandler(state, transport);
      ch.pipeline().addLast("proxy", proxy);
      if (transport.secure() && drain.begun()) {
        // the handshake ended during a drain: this connection's first exchange is its last
        ch.eventLoop().execute(proxy::retire);
      }
    }

    /** HTTP/2, chosen by ALPN: offered when {@code listen.http2} is on (the default with TLS). */
    @Override
    public void h2(Channel ch, ClientTransport transport) {
      Http2Front.install(ch.pipeline(), state, Http2Front.ALPN, transport);
      if (transport.secure() && drain.begun()) {
        Http2Front.retire(ch); // the handshake ended during a drain: GOAWAY at once
      }
    }
  }

  /** Binds {@code host:port}; a failure (the address in use, say) is a one-line {@link ListenException}. */
  private static Channel listen(ServerBootstrap b, String setting, String host, int port) throws InterruptedException {
    ChannelFuture f = b.bind(host, port).await();
    if (!f.isSuccess()) {
      throw new ListenException(setting, host, port, f.cause());
    }
    return f.channel();
  }

  /** What the admin port can ask of the gateway. */
  private AdminHandler.Actions actions() {
    return new AdminHandler.Actions() {
      @Override
      public String reload() throws ConfigException {
        return reloadFromFile();
      }

      @Override
      public Duration drain() {
        Duration timeout = config().shutdown().drainTimeout();
        GatewayServer.this.drain(timeout);
        return timeout;
      }

      @Override
      public Readiness readiness() {
        return GatewayServer.this.readiness();
      }
    };
  }

  /**
   * Begins the graceful stop ({@link Drain}), or finds it under way: the proxy listener closes, open
   * connections close after their exchange in flight, and those still open after {@code timeout}
   * are closed. Never blocks; the admin listener stays open. Returns when it is over: {@code true}
   * when no exchange had to be cut.
   */
  public CompletionStage<Boolean> drain(Duration timeout) {
    return drain.begin(listener, timeout, state.timers(), boss.next()).minimalCompletionStage();
  }

  /** Completes when a drain (or {@link #close}) is over: {@code true} when no exchange had to be cut. */
  public CompletionStage<Boolean> drained() {
    return drain.over();
  }

  /**
   * Whether the gateway should be sent traffic: not while it drains, nor while a Redis store that
   * fails closed has no connection (its {@link RedisStore#connected()}, a cheap reading of the
   * connection's state; a store that fails open or falls back still answers every request).
   */
  public Readiness readiness() {
    if (drain.begun()) {
      return Readiness.DRAINING;
    }
    return failsClosed != null && !failsClosed.connected() ? Readiness.STORE_UNAVAILABLE : Readiness.READY;
  }

  /** Builds a snapshot, reusing the pools of upstreams whose origin did not change. */
  private Snapshot snapshot(GatewayConfig config, Map<String, UpstreamPool> previous) throws InterruptedException {
    Map<String, UpstreamPool> pools = new HashMap<>();
    for (Upstream u : config.upstreams().values()) {
      String host = u.host();
      int port = u.port();
      if (u.demo()) {
        DemoUpstream d = demos.get(u.name());
        if (d == null) {
          d = DemoUpstream.start(workers, serverChannel);
          demos.put(u.name(), d);
          LOG.info("demo upstream {} listening on http://127.0.0.1:{}", u.name(), d.port());
        }
        host = "127.0.0.1";
        port = d.port();
      }
      UpstreamPool old = previous.get(u.name());
      if (old != null && old.sameOrigin(host, port, u.tls())) {
        pools.put(u.name(), old);
      } else {
        pools.put(u.name(), new UpstreamPool(u.name(), host, port, u.tls(), u.maxConnections(),
            config.timeouts().connect(), clientChannel));
      }
    }
    Map<Route, VendRoutes> vend = new IdentityHashMap<>();
    for (Route r : config.routes()) {
      r.vend().ifPresent(v -> vend.put(r, VendRoutes.of(v, config.policies(), state.limiter())));
    }
    GatewayMessages vocabulary = GatewayMessages.of(sections(config), state.ticker());
    ConfiguredGate gate = ConfiguredGate.of(sections(config), state, vocabulary,
        planResolvers.resolver(config.plans().map(PlanSettings::resolver)));
    gate.gate().discovery().ifPresent(GatewayServer::warnOverclaim);
    return new Snapshot(config, new RouteTable(config, vocabulary, gate), pools, vocabulary, vend,
        LimitsPage.of(config), gate.gate());
  }

  /**
   * One line at load when {@code service.conformance} claims more than the configuration delivers
   * (Graceful Boundaries "Self-Assertion and External Validation": {@code headroom check} would
   * report the claim as too high).
   */
  private static void warnOverclaim(LimitsDiscoveryDocument doc) {
    if (doc.overclaims()) {
      LOG.warn("service.conformance declares {} but this configuration delivers {}: {}", doc.conformance().token(),
          doc.computed().token(), doc.shortfall().orElse("no route is listed in discovery"));
    }
  }

  /**
   * A configuration's sections, as the readers returned them: what the request vocabulary is built
   * from, both at load (before the configuration exists) and here.
   */
  public static ConfigSections sections(GatewayConfig config) {
    return new ConfigSections(config.service(), config.listen(), config.admin(), config.store(),
        config.trustedProxies(), config.limits(), config.timeouts(), config.shutdown(), config.upstreams(), config.policies(),
        config.routes(), config.pk(), config.plans(), config.accessLog(), config.telemetry());
  }

  /** The proxy listener's address. */
  public InetSocketAddress address() {
    return (InetSocketAddress) listener.localAddress();
  }

  /** The admin listener's address, when enabled. */
  public Optional<InetSocketAddress> adminAddress() {
    return admin == null ? Optional.empty() : Optional.of((InetSocketAddress) admin.localAddress());
  }

  /** What every connection shares. */
  public GatewayState state() {
    return state;
  }

  /** The configuration in force. */
  public GatewayConfig config() {
    return state.snapshot().config();
  }

  /** The meters, for embedding hosts that scrape themselves. */
  public PrometheusMeterRegistry registry() {
    return registry;
  }

  /** Lowers (or restores, with 1) a policy's capacity at run time. */
  public void setCapacity(String policy, double factor) {
    Policy p = state.snapshot().config().policies().get(policy);
    if (p == null) {
      throw new IllegalArgumentException("policy: \"" + policy + "\" is not a policy; expected one of "
          + state.snapshot().config().policies().keySet());
    }
    state.capacity().set(p.quota(), factor);
  }

  /**
   * Swaps in a new configuration. Requests in flight finish under the old one; counters of
   * policies that did not change keep counting (the store is the same). The listeners and the
   * store are not rebound: a change to listen, admin or store is reported and ignored until restart.
   */
  public synchronized void reload(GatewayConfig next) throws InterruptedException {
    GatewayConfig current = state.snapshot().config();
    List<String> ignored = new ArrayList<>();
    if (!next.listen().equals(current.listen())) {
      ignored.add("listen");
    }
    if (!next.admin().equals(current.admin())) {
      ignored.add("admin");
    }
    if (!next.store().equals(current.store())) {
      ignored.add("store");
    }
    if (!next.telemetry().equals(current.telemetry())) {
      ignored.add("telemetry");
    }
    if (!ignored.isEmpty()) {
      LOG.warn("reload: changes to {} take effect only after a restart", ignored);
    }
    Snapshot old = state.snapshot();
    Snapshot fresh = snapshot(next, old.pools());
    state.swap(fresh);
    for (Map.Entry<String, UpstreamPool> e : old.pools().entrySet()) {
      if (!fresh.pools().containsValue(e.getValue())) {
        e.getValue().close();
      }
    }
    LOG.info("configuration reloaded from {}", next.source());
  }

  /** Reads the configuration file again; used by SIGHUP, file changes and the admin port. */
  public synchronized String reloadFromFile() throws ConfigException {
    if (file.isEmpty()) {
      throw new ConfigException("<sample>", List.of("no configuration file to reload: the gateway runs the "
          + "sample configuration (start it with --config FILE)"));
    }
    GatewayConfig next = GatewayConfig.load(file.get(), maxConfigBytes);
    GatewayConfig current = state.snapshot().config();
    next = next.withListenPort(current.listen().port()).withAdminPort(current.admin().port());
    try {
      reload(next);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ConfigException(file.get().toString(), List.of("interrupted while reloading"));
    }
    return next.source();
  }

  /**
   * Sends the last spans and pushes the meters once more, then stops exporting. Called after the
   * event loops have stopped, as the access log is closed: the exchanges their shutdown ends, or
   * that ended a moment after their client had the response, still have their spans sent.
   */
  public void closeTelemetry() {
    if (telemetry != null) {
      telemetry.close();
    }
  }

  private void reloadQuietly() {
    try {
      reloadFromFile();
    } catch (ConfigException e) {
      LOG.error("reload refused, the previous configuration stays in force: {}", e.getMessage());
    }
  }

  /**
   * Stops listening and releases what the server holds, each step whatever became of the others
   * ({@link CloseSequence}): a failure is logged, the rest still closes, and the drain is over
   * ({@link #drained()} completes) in every case; the first failure is thrown at the end. The event
   * loops are the caller's and stay running.
   */
  @Override
  public synchronized void close() {
    CloseSequence steps = new CloseSequence("the gateway's listeners and upstreams");
    if (watcher != null) {
      steps.run("the configuration watcher", watcher::close);
    }
    if (listener != null) {
      steps.run("the proxy listener", () -> listener.close().syncUninterruptibly());
    }
    if (tls != null) {
      steps.run("the listener's TLS", tls::close);
    }
    if (admin != null) {
      steps.run("the admin listener", () -> admin.close().syncUninterruptibly());
    }
    Snapshot s = state.snapshot();
    if (s != null) {
      s.pools().forEach((name, pool) -> steps.run("the pool of upstream " + name, pool::close));
    }
    demos.forEach((name, demo) -> steps.run("the demo upstream " + name, demo::close));
    steps.run("the plan resolvers", planResolvers::close);
    if (dashboard != null) {
      steps.run("the dashboard", dashboard::stop);
    }
    steps.run("the meter clock", meterClock::stop);
    steps.run("the meter registry", registry::close);
    steps.run("the drain", drain::closing);
    steps.rethrow();
  }
}
