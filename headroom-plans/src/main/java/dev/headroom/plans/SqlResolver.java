package dev.headroom.plans;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.headroom.Ticker;
import dev.headroom.enforcement.partition.ApiKeys;
import dev.headroom.enforcement.partition.RequestView;
import dev.headroom.enforcement.plan.PlanResolution;
import dev.headroom.enforcement.plan.PlanResolver;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Plans by API key from a SQL query through JDBC: the key from one request header is hashed
 * ({@link ApiKeys#sha256}: tables hold hashes, never keys) and bound as the query's one parameter;
 * the first column of the first row is the plan, no row an unknown key.
 *
 * <h2>How a lookup goes, and why</h2>
 * <ol>
 *   <li>The {@link PlanCache}: a plan found is kept {@code ttl} (60 s by default), an unknown key
 *       {@code negativeTtl} (10 s), at most {@code maxEntries} (10,000) keys, least recently used
 *       out first. A hit answers at once, on the calling thread.
 *   <li>A miss joins the query already running for the same key, if any (a burst of one new key is
 *       one query), or submits one to the resolver's own threads ({@code poolSize}, a queue of
 *       {@value #QUEUE_PER_THREAD} per thread; the calling thread never waits on JDBC). A full
 *       queue is {@link PlanResolution.Unavailable}.
 *   <li>The query runs on a HikariCP pool of {@code poolSize} connections (connection timeout
 *       250 ms, Hikari's least; the pool starts even when the database is down, and reconnects
 *       when it is back), with a statement timeout of the deadline rounded up to whole seconds (JDBC's
 *       unit), so that a slow query cannot hold a connection for long.
 *   <li>The caller gets its answer within {@code deadline} (100 ms by default): when the query has
 *       not answered by then, {@link PlanResolution.Unavailable} (the fallback plan); the query
 *       goes on and its answer, when it comes, fills the cache for the next request. A SQL error
 *       (the database down, a table missing) is {@code Unavailable} too, with its SQLState.
 * </ol>
 *
 * <p>Time for the cache is the injected {@link Ticker}; the deadline is the JDK's timer
 * ({@link CompletableFuture#completeOnTimeout}). Thread-safe.
 */
public final class SqlResolver implements PlanResolver {
  /** Queries that may wait per resolver thread before lookups are answered unavailable. */
  public static final int QUEUE_PER_THREAD = 256;

  private final HikariDataSource pool;
  private final ThreadPoolExecutor executor;
  private final String query;
  private final String header;
  private final Duration deadline;
  private final PlanCache cache;
  private final ConcurrentHashMap<String, CompletableFuture<PlanResolution>> inFlight = new ConcurrentHashMap<>();

  private SqlResolver(Builder b) {
    HikariConfig c = new HikariConfig();
    c.setJdbcUrl(b.jdbcUrl);
    b.user.ifPresent(c::setUsername);
    b.password.ifPresent(c::setPassword);
    c.setMaximumPoolSize(b.poolSize);
    c.setMinimumIdle(0);
    c.setConnectionTimeout(250);
    c.setValidationTimeout(250);
    c.setInitializationFailTimeout(-1); // start even when the database is down
    c.setPoolName("headroom-plans");
    c.setReadOnly(true);
    this.pool = new HikariDataSource(c);
    this.executor = new ThreadPoolExecutor(b.poolSize, b.poolSize, 60, TimeUnit.SECONDS,
        new ArrayBlockingQueue<>(b.poolSize * QUEUE_PER_THREAD), r -> {
          Thread t = new Thread(r, "headroom-plans-sql");
          t.setDaemon(true);
          return t;
        });
    this.query = b.query;
    this.header = b.header;
    this.deadline = b.deadline;
    this.cache = new PlanCache(b.maxEntries, b.ttl.toNanos(), b.negativeTtl.toNanos(), b.ticker);
  }

  /** Starts a resolver for a JDBC URL (PostgreSQL: {@code jdbc:postgresql://host:5432/db}). */
  public static Builder builder(String jdbcUrl, String query) {
    return new Builder(jdbcUrl, query);
  }

  @Override
  public CompletionStage<PlanResolution> resolve(RequestView request) {
    Optional<String> hash = ApiKeys.presented(request, header);
    if (hash.isEmpty()) {
      return CompletableFuture.completedFuture(PlanResolution.anonymous());
    }
    Optional<PlanCache.Entry> hit = cache.get(hash.get());
    if (hit.isPresent()) {
      return CompletableFuture.completedFuture(answer(hit.get().plan()));
    }
    CompletableFuture<PlanResolution> query = inFlight.computeIfAbsent(hash.get(), this::submit);
    if (query.isDone()) {
      inFlight.remove(hash.get(), query); // refused by a full queue: never left in the map
    }
    // the caller's own copy bounded by the deadline; the query itself runs on and fills the cache
    return query.thenApply(r -> r).completeOnTimeout(new PlanResolution.Unavailable("the plan database "
        + "did not answer within " + deadline.toMillis() + " ms"), deadline.toNanos(), TimeUnit.NANOSECONDS);
  }

  private CompletableFuture<PlanResolution> submit(String hash) {
    CompletableFuture<PlanResolution> f = new CompletableFuture<>();
    try {
      executor.execute(() -> {
        try {
          f.complete(lookup(hash));
        } catch (RuntimeException e) {
          f.complete(new PlanResolution.Unavailable("the plan lookup failed: " + e));
        } finally {
          inFlight.remove(hash, f);
        }
      });
    } catch (RejectedExecutionException e) {
      f.complete(new PlanResolution.Unavailable("the plan lookup queue is full"));
    }
    return f;
  }

  /** One query on a pooled connection; its answer is cached, an error is not. */
  private PlanResolution lookup(String hash) {
    try (Connection c = pool.getConnection(); PreparedStatement s = c.prepareStatement(query)) {
      s.setQueryTimeout((int) Math.max(1, (deadline.toMillis() + 999) / 1000));
      s.setString(1, hash);
      try (ResultSet rs = s.executeQuery()) {
        Optional<String> plan = rs.next() ? Optional.ofNullable(rs.getString(1)) : Optional.empty();
        cache.put(hash, plan);
        return answer(plan);
      }
    } catch (SQLException e) {
      return new PlanResolution.Unavailable("the plan query failed (SQLState " + e.getSQLState() + "): "
          + e.getMessage());
    }
  }

  private static PlanResolution answer(Optional<String> plan) {
    return plan.filter(p -> !p.isEmpty()).<PlanResolution>map(PlanResolution.Named::new)
        .orElse(PlanResolution.anonymous());
  }

  /** Keys held by the cache, for tests and metrics. */
  public int cached() {
    return cache.size();
  }

  @Override
  public void close() {
    executor.shutdownNow();
    pool.close();
  }

  /** Builds a {@link SqlResolver}; every setting is checked by {@link #build()}. */
  public static final class Builder {
    private final String jdbcUrl;
    private final String query;
    private Optional<String> user = Optional.empty();
    private Optional<String> password = Optional.empty();
    private String header = "X-Api-Key";
    private int poolSize = 4;
    private Duration deadline = Duration.ofMillis(100);
    private int maxEntries = 10_000;
    private Duration ttl = Duration.ofSeconds(60);
    private Duration negativeTtl = Duration.ofSeconds(10);
    private Ticker ticker = Ticker.system();

    private Builder(String jdbcUrl, String query) {
      this.jdbcUrl = jdbcUrl;
      this.query = query;
    }

    /** The database user. */
    public Builder user(String user) {
      this.user = Optional.of(user);
      return this;
    }

    /** The database password (from the environment or a file; never from configuration text). */
    public Builder password(String password) {
      this.password = Optional.of(password);
      return this;
    }

    /** The request header carrying the API key; {@code X-Api-Key} by default. */
    public Builder header(String header) {
      this.header = Objects.requireNonNull(header, "header");
      return this;
    }

    /** Connections and query threads, 1 to 64; 4 by default. */
    public Builder poolSize(int poolSize) {
      this.poolSize = poolSize;
      return this;
    }

    /** The longest a request waits for the database, 1 ms to 10 s; 100 ms by default. */
    public Builder deadline(Duration deadline) {
      this.deadline = Objects.requireNonNull(deadline, "deadline");
      return this;
    }

    /** The cache: at most {@code maxEntries} keys, a plan kept {@code ttl}, an unknown key {@code negativeTtl}. */
    public Builder cache(int maxEntries, Duration ttl, Duration negativeTtl) {
      this.maxEntries = maxEntries;
      this.ttl = Objects.requireNonNull(ttl, "ttl");
      this.negativeTtl = Objects.requireNonNull(negativeTtl, "negativeTtl");
      return this;
    }

    /** The cache's time; for tests. */
    public Builder ticker(Ticker ticker) {
      this.ticker = Objects.requireNonNull(ticker, "ticker");
      return this;
    }

    /**
     * Validates and builds (the pool starts without connecting).
     *
     * @throws IllegalArgumentException naming the setting, the value and what was expected
     */
    public SqlResolver build() {
      if (jdbcUrl == null || !jdbcUrl.startsWith("jdbc:postgresql:")) {
        throw new IllegalArgumentException("url: " + (jdbcUrl == null ? "nothing" : "'" + jdbcUrl + "'")
            + "; expected a PostgreSQL JDBC URL such as jdbc:postgresql://127.0.0.1:5432/db");
      }
      if (query == null || query.chars().filter(ch -> ch == '?').count() != 1) {
        throw new IllegalArgumentException("query: " + (query == null ? "nothing" : "'" + query + "'")
            + "; expected one SELECT with exactly one ? (the SHA-256 hex of the API key)");
      }
      if (poolSize < 1 || poolSize > 64) {
        throw new IllegalArgumentException("poolSize: " + poolSize + "; expected 1 to 64");
      }
      if (deadline.isNegative() || deadline.isZero() || deadline.compareTo(Duration.ofSeconds(10)) > 0) {
        throw new IllegalArgumentException("deadline: " + deadline + "; expected 1ms to 10s");
      }
      if (maxEntries < 0 || maxEntries > 10_000_000) {
        throw new IllegalArgumentException("maxEntries: " + maxEntries + "; expected 0 to 10000000");
      }
      if (ttl.isNegative() || negativeTtl.isNegative()) {
        throw new IllegalArgumentException("ttl: " + ttl + ", negativeTtl: " + negativeTtl + "; expected 0 or more");
      }
      return new SqlResolver(this);
    }
  }
}
