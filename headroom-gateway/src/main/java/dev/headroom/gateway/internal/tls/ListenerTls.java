package dev.headroom.gateway.internal.tls;

import dev.headroom.Ticker;
import dev.headroom.gateway.config.ListenTls;
import dev.headroom.gateway.internal.Timers;
import dev.headroom.gateway.internal.admin.GatewayMetrics;
import dev.headroom.gateway.internal.config.ConfigWatcher;
import io.netty.channel.Channel;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The TLS of the proxy listener ({@code listen.tls}): the {@link SslContext} new connections
 * handshake with, built from the PEM files and built again when they change.
 *
 * <p>Engine: Netty's OpenSSL engine (BoringSSL, from netty-tcnative-boringssl-static) where its
 * native library loads on this platform, the JDK's otherwise; which one is logged at start.
 *
 * <p>Reload: the certificate, key and client CA files are watched ({@link ConfigWatcher}); on a
 * change the files are read again and, when they make a valid pair, a new context replaces the
 * current one. Only connections accepted from then on use it: a connection's handler is made from
 * the context in force when it was accepted and keeps it, so open connections are not dropped or
 * renegotiated. A change that leaves the files unusable (the certificate replaced before its key,
 * a file half written) is logged in one line and the previous context stays in force; the next
 * change is tried again.
 *
 * <p>Thread-safety: {@link #current} is a volatile read; {@link #reload} is synchronized (it runs on
 * the watchers' threads).
 */
public final class ListenerTls implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ListenerTls.class);

  private final ListenTls settings;
  private final List<String> offered;
  private final Ticker ticker;
  private final SslProvider provider;
  private final List<ConfigWatcher> watchers = new ArrayList<>();
  private volatile SslContext current;

  private ListenerTls(ListenTls settings, List<String> offered, Ticker ticker) {
    this.settings = settings;
    this.offered = List.copyOf(offered);
    this.ticker = ticker;
    this.provider = OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK;
  }

  /**
   * Reads the files {@code settings} names and builds the first context; with {@code watch}, the
   * files are watched for changes until {@link #close}.
   *
   * @param offered the ALPN protocol ids offered, most preferred first
   * @param ticker whose {@link Ticker#instant()} judges the certificate's validity
   * @throws TlsFileException naming the setting and the file that cannot serve
   */
  public static ListenerTls start(ListenTls settings, List<String> offered, Ticker ticker, boolean watch) {
    ListenerTls tls = new ListenerTls(settings, offered, ticker);
    tls.current = tls.build();
    LOG.info("listen.tls: {} engine{}, protocols {}, ALPN {}, client certificates {}",
        tls.provider == SslProvider.OPENSSL ? "OpenSSL (" + OpenSsl.versionString() + ")" : "JDK",
        tls.provider == SslProvider.OPENSSL ? "" : " (netty-tcnative's OpenSSL did not load: "
            + OpenSsl.unavailabilityCause() + ")",
        settings.protocols(), offered, settings.clientAuth().token());
    if (watch) {
      Set<Path> files = new LinkedHashSet<>(List.of(settings.certificate(), settings.key()));
      settings.clientCa().ifPresent(files::add);
      try {
        for (Path f : files) {
          tls.watchers.add(ConfigWatcher.start(f, tls::reload));
        }
      } catch (RuntimeException e) {
        tls.close();
        throw e;
      }
    }
    return tls;
  }

  /** The engine in use: {@code OpenSSL} or {@code JDK}. */
  public String engine() {
    return provider == SslProvider.OPENSSL ? "OpenSSL" : "JDK";
  }

  /** The context a connection accepted now handshakes with. */
  public SslContext current() {
    return current;
  }

  /**
   * Makes a new connection's TLS handlers: the {@link PlaintextGuard} that reads its first record,
   * then the {@link AlpnSwitch} that installs the chosen protocol through {@code pipelines}.
   *
   * @param handshakeTimeout how long a client has to send its first record and finish its handshake
   */
  public void install(Channel ch, ProtocolPipelines pipelines, GatewayMetrics metrics, Timers timers,
      Duration handshakeTimeout) {
    ch.pipeline().addLast("tls", new PlaintextGuard(current, metrics, timers, handshakeTimeout));
    ch.pipeline().addLast("alpn", new AlpnSwitch(pipelines, metrics));
  }

  /** Reads the files again; keeps the context in force when they cannot serve. */
  public synchronized void reload() {
    try {
      current = build();
      LOG.info("listen.tls: certificate and key read again from {} and {}; new connections use them",
          settings.certificate(), settings.key());
    } catch (TlsFileException e) {
      LOG.warn("listen.tls: the files changed but cannot serve, the previous certificate stays in force: {}",
          e.getMessage());
    }
  }

  private SslContext build() {
    TlsMaterial m = TlsMaterial.read(settings);
    m.validityWarning(settings.certificate().toString(), ticker.instant()).ifPresent(LOG::warn);
    try {
      SslContextBuilder b = SslContextBuilder.forServer(m.key(), m.chain().toArray(new X509Certificate[0]))
          .sslProvider(provider)
          .protocols(settings.protocols())
          .applicationProtocolConfig(new ApplicationProtocolConfig(ApplicationProtocolConfig.Protocol.ALPN,
              ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
              ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT, offered));
      switch (settings.clientAuth()) {
        case OPTIONAL -> b.clientAuth(ClientAuth.OPTIONAL).trustManager(m.clientCa().toArray(new X509Certificate[0]));
        case REQUIRED -> b.clientAuth(ClientAuth.REQUIRE).trustManager(m.clientCa().toArray(new X509Certificate[0]));
        default -> b.clientAuth(ClientAuth.NONE);
      }
      return b.build();
    } catch (SSLException | IllegalArgumentException e) {
      throw new TlsFileException("listen.tls.certificate", settings.certificate(), "with its key cannot make a TLS "
          + "context (" + e.getMessage() + ")");
    }
  }

  @Override
  public void close() {
    watchers.forEach(ConfigWatcher::close);
  }
}
