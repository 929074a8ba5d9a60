package dev.headroom.redis;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaPolicy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The process {@link MultiProcessTest} starts several times: decides {@code decisions} requests
 * on {@code threads} threads against the shared keys, then prints what it admitted.
 *
 * <p>Every request asks two policies at once: a global token bucket and a per-tenant fixed window.
 */
public final class Hammer {

  static final int TENANTS = 10;
  static final QuotaPolicy GLOBAL = QuotaPolicy.builder("global").quota(10_000)
      .window(Duration.ofDays(366)).algorithm(Algorithm.TOKEN_BUCKET).build();
  static final QuotaPolicy TENANT = QuotaPolicy.builder("tenant").quota(800)
      .window(Duration.ofDays(366)).algorithm(Algorithm.FIXED_WINDOW).build();

  private Hammer() {}

  public static void main(String[] args) throws Exception {
    String uri = args[0];
    String prefix = args[1];
    int decisions = Integer.parseInt(args[2]);
    int threads = Integer.parseInt(args[3]);
    AtomicLong next = new AtomicLong();
    AtomicLong admitted = new AtomicLong();
    long[] perTenant = new long[TENANTS];
    try (RedisStore store = RedisStore.builder().uri(uri).keyPrefix(prefix)
        .failurePolicy(FailurePolicy.FAIL_CLOSED).decisionDeadline(Duration.ofSeconds(10)).build()) {
      Thread[] workers = new Thread[threads];
      for (int t = 0; t < threads; t++) {
        workers[t] = new Thread(() -> {
          while (next.getAndIncrement() < decisions) {
            int tenant = ThreadLocalRandom.current().nextInt(TENANTS);
            Decision d = store.acquire(List.of(Acquisition.of(GLOBAL, PartitionKey.GLOBAL),
                Acquisition.of(TENANT, PartitionKey.of("tenant-" + tenant))));
            if (d.allowed()) {
              admitted.incrementAndGet();
              synchronized (perTenant) {
                perTenant[tenant]++;
              }
            }
          }
        });
        workers[t].start();
      }
      for (Thread w : workers) {
        w.join();
      }
      StringBuilder out = new StringBuilder("admitted=" + admitted.get() + " decisions=" + decisions + " tenants=");
      for (int i = 0; i < TENANTS; i++) {
        out.append(i == 0 ? "" : ",").append(perTenant[i]);
      }
      System.out.println(out);
    }
  }
}
