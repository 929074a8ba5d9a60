package dev.headroom.gateway.internal;

import dev.headroom.Ticker;
import dev.headroom.enforcement.plan.PlanResolver;
import dev.headroom.gateway.config.PlanSource;
import dev.headroom.gateway.internal.config.ConfigWatcher;
import dev.headroom.plans.ApiKeyFileResolver;
import dev.headroom.plans.JwtResolver;
import dev.headroom.plans.SqlResolver;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gateway's plan resolver and what keeps it current: built from {@code plans.resolver}, kept
 * across reloads while that section is unchanged (a SQL resolver's pool and cache survive), and,
 * for a key file, a {@link ConfigWatcher} that reads the file again when it changes (a file that
 * does not read keeps the keys in force, and says why). A resolver a reload replaces is retired,
 * not closed: it closes once the requests resolving with it are done ({@link HeldResolver}).
 * Guarded by the server's lock.
 */
public final class PlanResolvers implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PlanResolvers.class);

  /** The gateway's time: the SQL cache's, and the JWT resolver's clock. */
  private final Ticker ticker;
  private PlanSource source;
  private HeldResolver held;
  private ConfigWatcher watcher;

  /** No resolver yet; {@code ticker} is the gateway's time, which the resolvers it builds keep. */
  public PlanResolvers(Ticker ticker) {
    this.ticker = ticker;
  }

  /**
   * The resolver for {@code next} (the one in force when unchanged); empty without plans. A new
   * one is built before the one it replaces is retired, so that a resolver that does not build
   * leaves the one in force as it was.
   */
  public synchronized Optional<HeldResolver> resolver(Optional<PlanSource> next) {
    if (next.isPresent() && next.get().equals(source)) {
      return Optional.of(held);
    }
    ConfigWatcher nextWatcher = null;
    HeldResolver fresh = null;
    if (next.isPresent()) {
      PlanResolver r = build(next.get());
      nextWatcher = watch(next.get(), r);
      fresh = new HeldResolver(r);
    }
    retire(fresh);
    source = next.orElse(null);
    held = fresh;
    watcher = nextWatcher;
    return Optional.ofNullable(fresh);
  }

  private PlanResolver build(PlanSource s) {
    if (s instanceof PlanSource.KeyFile k) {
      return ApiKeyFileResolver.of(k.file(), k.header());
    }
    if (s instanceof PlanSource.Jwt j) {
      return jwt(j, ticker);
    }
    if (s instanceof PlanSource.Sql q) {
      return sql(q, ticker);
    }
    throw new IllegalStateException("no resolver for " + s);
  }

  /** For a key file, the watcher that reads it again when it changes; null for other resolvers. */
  private static ConfigWatcher watch(PlanSource s, PlanResolver resolver) {
    if (s instanceof PlanSource.KeyFile k && resolver instanceof ApiKeyFileResolver r) {
      return ConfigWatcher.start(k.file(), () -> {
        try {
          r.reload();
          LOG.info("plan keys reloaded from {}: {} keys", k.file(), r.size());
        } catch (IllegalArgumentException e) {
          LOG.error("plan keys not reloaded, the keys in force stay: {}", e.getMessage());
        }
      });
    }
    return null;
  }

  /** The longest the gateway waits for any resolver, whatever its own deadline says. */
  static final Duration DEADLINE = Duration.ofSeconds(2);

  /**
   * The longest a request waits for its plan: {@link #DEADLINE}, or a SQL resolver's own
   * {@code deadline} when it is longer (an operator who allows the database 5 s gets 5 s).
   */
  public static Duration wait(PlanSource s) {
    return s instanceof PlanSource.Sql q && q.deadline().compareTo(DEADLINE) > 0 ? q.deadline() : DEADLINE;
  }

  /**
   * The JWT resolver of {@code plans.resolver} (type jwt).
   *
   * @throws IllegalArgumentException when a key or the JWKS file does not read
   */
  public static JwtResolver jwt(PlanSource.Jwt j, Ticker ticker) {
    JwtResolver.Builder b = JwtResolver.builder().claim(j.claim()).clockSkew(j.clockSkew()).clock(clock(ticker));
    j.jwksFile().ifPresent(b::jwksFile);
    j.jwksUrl().ifPresent(b::jwksUrl);
    if (j.hmacKeyBase64().isPresent()) {
      try {
        b.hmacKey(Base64.getDecoder().decode(j.hmacKeyBase64().get()));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("hmacKey: not base64; expected the base64 HS256 key", e);
      }
    }
    j.audience().ifPresent(b::audience);
    j.issuer().ifPresent(b::issuer);
    return b.build();
  }

  /**
   * The SQL resolver of {@code plans.resolver} (type sql); the pool starts without connecting.
   *
   * @throws IllegalArgumentException naming the setting that is not valid
   */
  public static SqlResolver sql(PlanSource.Sql q, Ticker ticker) {
    SqlResolver.Builder b = SqlResolver.builder(q.url(), q.query()).header(q.header()).deadline(q.deadline())
        .poolSize(q.poolSize()).cache(q.maxEntries(), q.ttl(), q.negativeTtl()).ticker(ticker);
    q.user().ifPresent(b::user);
    q.password().ifPresent(b::password);
    return b.build();
  }

  /** The ticker (epoch nanoseconds) as a clock, for a token's exp and nbf. */
  static Clock clock(Ticker ticker) {
    return new Clock() {
      @Override
      public ZoneId getZone() {
        return ZoneOffset.UTC;
      }

      @Override
      public Clock withZone(ZoneId zone) {
        return Clock.fixed(instant(), zone);
      }

      @Override
      public Instant instant() {
        long n = ticker.read();
        return Instant.ofEpochSecond(Math.floorDiv(n, 1_000_000_000L), Math.floorMod(n, 1_000_000_000L));
      }
    };
  }

  /** Retires the resolver in force (it closes once no request holds it), {@code next} taking over. */
  private void retire(HeldResolver next) {
    if (watcher != null) {
      watcher.close();
      watcher = null;
    }
    if (held != null) {
      held.retire(next);
      held = null;
    }
    source = null;
  }

  @Override
  public synchronized void close() {
    retire(null);
  }
}
