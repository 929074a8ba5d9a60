package dev.headroom.spec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Acquisition;
import dev.headroom.Decision;
import dev.headroom.Lease;
import dev.headroom.PartitionKey;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Concurrency leases, as documented on {@code dev.headroom.internal.Concurrency}: a request holds
 * a lease while in flight, {@code r = q - held}, {@code t} and Retry-After a hint of at most one
 * second, and a lost release comes back after the lease timeout (quota unit
 * {@code concurrent-requests}, draft-ietf-httpapi-ratelimit-headers-09 section 3.1.2).
 */
public abstract class ConcurrencySpec extends StoreSpecification {

  /** The worked numbers: q = 2, lease timeout 30 s. */
  private final QuotaPolicy uploads = QuotaPolicy.builder("uploads").quota(2).window(seconds(60))
      .unit(QuotaUnit.CONCURRENT_REQUESTS).leaseTimeout(seconds(30)).build();

  private Decision take(PartitionKey k) {
    return limiter.acquire(List.of(Acquisition.of(uploads, k)));
  }

  @Test
  @DisplayName("Concurrency worked numbers: two uploads hold both units, the third is refused, a release lets the next in")
  void acquireAndRelease() {
    PartitionKey k = key("client");
    assertThat(peek(uploads, k).reset()).as("nothing held: t = 0").isZero();
    Decision first = take(k);
    Decision second = take(k);
    assertThat(first.allowed()).isTrue();
    assertThat(second.allowed()).isTrue();
    assertThat(first.leases()).hasSize(1);
    assertThat(second.leases()).hasSize(1);
    assertThat(first.leases().get(0)).isNotEqualTo(second.leases().get(0));
    assertThat(first.leases().get(0).units()).isEqualTo(1);
    assertThat(first.outcomes().get(0).remaining()).isEqualTo(1);
    assertThat(second.outcomes().get(0).remaining()).isZero();
    assertThat(second.outcomes().get(0).reset()).as("t: a hint of at most one second").isEqualTo(seconds(1));
    Decision third = take(k);
    assertThat(third.allowed()).isFalse();
    assertThat(third.leases()).isEmpty();
    assertThat(third.retryAfter()).isEqualTo(seconds(1));
    assertThat(third.retryAfterSeconds()).isEqualTo(1);
    assertThat(third.outcomes().get(0).remaining()).isZero();
    limiter.release(first);
    Decision fourth = take(k);
    assertThat(fourth.allowed()).isTrue();
    assertThat(fourth.outcomes().get(0).remaining()).isZero();
  }

  @Test
  @DisplayName("a second release of the same lease gives nothing back")
  void doubleReleaseDoesNothing() {
    PartitionKey k = key("client");
    Decision a = take(k);
    take(k);
    limiter.release(a);
    limiter.release(a);
    store.release(a.leases().get(0));
    assertThat(peek(uploads, k).remaining()).isEqualTo(1);
    assertThat(take(k).allowed()).isTrue();
    assertThat(take(k).allowed()).as("only one unit came back").isFalse();
  }

  @Test
  @DisplayName("a lost release comes back after the lease timeout (30 s), not a nanosecond sooner")
  void leaseTimeoutReclaimsALostLease() {
    PartitionKey k = key("client");
    take(k);
    take(k);
    advance(seconds(30).minusNanos(1));
    Decision early = take(k);
    assertThat(early.allowed()).isFalse();
    assertThat(early.retryAfter()).as("the hint is the time until the earliest lease times out").isEqualTo(nanos(1));
    assertThat(early.outcomes().get(0).reset()).isEqualTo(nanos(1));
    advanceNanos(1);
    PolicyOutcome reclaimed = peek(uploads, k);
    assertThat(reclaimed.remaining()).isEqualTo(2);
    assertThat(reclaimed.reset()).isZero();
    assertThat(take(k).allowed()).isTrue();
  }

  @Test
  @DisplayName("releasing a lease that timed out does not release anyone else's")
  void lateReleaseDoesNothing() {
    PartitionKey k = key("client");
    Decision lost = take(k);
    advance(seconds(31));
    Decision a = take(k);
    Decision b = take(k);
    assertThat(a.allowed()).isTrue();
    assertThat(b.allowed()).isTrue();
    limiter.release(lost);
    assertThat(take(k).allowed()).isFalse();
  }

  @Test
  @DisplayName("cost-weighted lease: cost 2 holds both units in one lease; cost 0 holds nothing")
  void costWeightedLease() {
    PartitionKey k = key("client");
    Decision zero = limiter.acquire(List.of(Acquisition.of(uploads, k, 0)));
    assertThat(zero.allowed()).isTrue();
    assertThat(zero.leases()).isEmpty();
    Decision both = limiter.acquire(List.of(Acquisition.of(uploads, k, 2)));
    assertThat(both.allowed()).isTrue();
    Lease lease = both.leases().get(0);
    assertThat(lease.units()).isEqualTo(2);
    assertThat(lease.policy()).isEqualTo(uploads);
    assertThat(lease.key()).isEqualTo(k);
    assertThat(take(k).allowed()).isFalse();
    assertThat(limiter.acquire(List.of(Acquisition.of(uploads, k, 0))).allowed())
        .as("a cost-0 request is allowed even when nothing is left").isTrue();
    limiter.release(both);
    assertThat(peek(uploads, k).remaining()).isEqualTo(2);
  }

  @Test
  @DisplayName("cost above q can never be held: refused, exceedsQuota, Retry-After the lease timeout")
  void costAboveQuota() {
    PartitionKey k = key("client");
    PolicyOutcome o = acquire(uploads, k, 3);
    assertThat(o.allowed()).isFalse();
    assertThat(o.exceedsQuota()).isTrue();
    assertThat(o.remaining()).isEqualTo(2);
    assertThat(o.retryAfter()).isEqualTo(seconds(30));
    assertThat(take(k).allowed()).isTrue();
    assertThat(take(k).allowed()).isTrue();
  }

  @Test
  @DisplayName("releasing the leases of a refused decision is safe and does nothing")
  void releasingARefusedDecision() {
    PartitionKey k = key("client");
    Decision a = take(k);
    Decision b = take(k);
    Decision refused = take(k);
    limiter.release(refused);
    assertThat(peek(uploads, k).remaining()).isZero();
    limiter.release(a);
    limiter.release(b);
    assertThat(peek(uploads, k).remaining()).isEqualTo(2);
  }
}
