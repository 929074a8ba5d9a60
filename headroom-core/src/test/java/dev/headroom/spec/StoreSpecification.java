package dev.headroom.spec;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.ManualTicker;
import dev.headroom.PartitionKey;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.Store;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * The base of every algorithm specification: a fresh store per test, a {@link ManualTicker}
 * standing at {@link ManualTicker#atFixedInstant()} (2026-01-01T00:00:00Z, the start of a window of
 * every common length), and helpers that keep the cases short.
 *
 * <p>A store module runs the suite by subclassing each specification and returning its
 * {@link StoreFixture} from {@link #fixture()}. Nothing here sleeps or reads the wall clock.
 */
public abstract class StoreSpecification {

  /** The instant every test starts at: a whole multiple of one second, one minute, one day. */
  protected static final Instant START = Instant.parse("2026-01-01T00:00:00Z");

  protected ManualTicker ticker;
  protected Store store;
  protected QuotaLimiter limiter;
  private String keyPrefix;

  /** The store under test. */
  protected abstract StoreFixture fixture();

  @BeforeEach
  final void openStore() {
    ticker = ManualTicker.atFixedInstant();
    store = fixture().newStore(ticker);
    limiter = QuotaLimiter.of(store);
    keyPrefix = UUID.randomUUID().toString().substring(0, 8) + ":";
  }

  @AfterEach
  final void closeStore() {
    store.close();
  }

  /** A partition key unique to this test (a shared remote store never mixes tests). */
  protected PartitionKey key(String name) {
    return PartitionKey.of(keyPrefix + name);
  }

  protected static QuotaPolicy policy(String name, long quota, Duration window, Algorithm algorithm) {
    QuotaUnit unit = algorithm == Algorithm.CONCURRENCY ? QuotaUnit.CONCURRENT_REQUESTS : QuotaUnit.REQUESTS;
    return QuotaPolicy.builder(name).quota(quota).window(window).unit(unit).algorithm(algorithm).build();
  }

  /** One request of {@code cost} units of one policy, decided alone. */
  protected PolicyOutcome acquire(QuotaPolicy policy, PartitionKey key, long cost) {
    Decision d = limiter.acquire(List.of(Acquisition.of(policy, key, cost)));
    return d.outcomes().get(0);
  }

  /** One request of one unit. */
  protected PolicyOutcome acquire(QuotaPolicy policy, PartitionKey key) {
    return acquire(policy, key, 1);
  }

  /** Reads the state without consuming: a cost-0 request. */
  protected PolicyOutcome peek(QuotaPolicy policy, PartitionKey key) {
    return acquire(policy, key, 0);
  }

  /** How many of {@code attempts} one-unit requests are allowed right now. */
  protected int admit(QuotaPolicy policy, PartitionKey key, int attempts) {
    int allowed = 0;
    for (int i = 0; i < attempts; i++) {
      if (acquire(policy, key).allowed()) {
        allowed++;
      }
    }
    return allowed;
  }

  protected void advance(Duration d) {
    ticker.advance(d);
  }

  protected void advanceNanos(long nanos) {
    ticker.advanceNanos(nanos);
  }

  /** Moves the clock to {@code offset} after {@link #START}. */
  protected void at(Duration offset) {
    ticker.set(START.plus(offset));
  }

  protected static Duration seconds(long s) {
    return Duration.ofSeconds(s);
  }

  protected static Duration millis(long ms) {
    return Duration.ofMillis(ms);
  }

  protected static Duration nanos(long ns) {
    return Duration.ofNanos(ns);
  }
}
