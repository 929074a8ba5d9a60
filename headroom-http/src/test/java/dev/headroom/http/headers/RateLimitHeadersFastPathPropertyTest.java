package dev.headroom.http.headers;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.PartitionKey;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.http.sf.StructuredFields;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import org.greenbytes.http.sfv.Dictionary;
import org.greenbytes.http.sfv.IntegerItem;
import org.greenbytes.http.sfv.ListElement;
import org.greenbytes.http.sfv.OuterList;
import org.greenbytes.http.sfv.Parameters;
import org.greenbytes.http.sfv.StringItem;
import org.junit.jupiter.api.Test;

/**
 * Property: the hot path's precomputed prefixes plus appended numbers produce exactly the bytes
 * that building the whole Structured Field with the library's types and serialising it does
 * (RFC 9651 section 4.1), for every dialect. Quotas above the largest Structured Fields Integer
 * (core allows up to 2^50) are reported as that Integer. Random policies, outcomes and partition keys from a
 * fixed seed; a failure names the seed and case to replay.
 */
class RateLimitHeadersFastPathPropertyTest {

  static final long SEED = 0x5EED_2025L;
  static final int CASES = 5_000;
  static final String NAME_START = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  static final String NAME_REST = NAME_START + "0123456789-_.:/";

  @Test
  void fastPathIsByteIdenticalToTheLibrarySerialisation() {
    SplittableRandom random = new SplittableRandom(SEED);
    for (int c = 0; c < CASES; c++) {
      Map<QuotaPolicy, byte[]> pks = new HashMap<>();
      List<PolicyOutcome> outcomes = new ArrayList<>();
      int n = 1 + random.nextInt(5);
      for (int i = 0; i < n; i++) {
        QuotaPolicy p = randomPolicy(random);
        if (random.nextBoolean()) {
          byte[] pk = new byte[random.nextInt(40)];
          random.nextBytes(pk);
          pks.put(p, pk);
        }
        long remaining = random.nextLong(p.quota() + 1);
        long resetNanos = random.nextLong(p.window().toNanos() + 1);
        boolean allowed = random.nextInt(4) != 0;
        long nextNanos = random.nextLong(resetNanos + 1);
        outcomes.add(new PolicyOutcome(p, PartitionKey.of("k" + i), 1, allowed, allowed ? remaining : 0, resetNanos,
            nextNanos, allowed ? 0 : 1 + random.nextLong(resetNanos + 1), null));
      }
      Decision decision = Decision.of(outcomes);
      String where = "seed " + SEED + " case " + c + " " + decision;

      long retry = decision.allowed() ? -1 : decision.retryAfterSeconds();
      for (HeaderDialect dialect : List.of(HeaderDialect.IETF, HeaderDialect.DRAFT_09, HeaderDialect.IETF_NEXT)) {
        RateLimitHeaders ietf = RateLimitHeaders.builder().dialects(dialect)
            .exposure((policy, key) -> Optional.ofNullable(pks.get(policy))).build();
        Map<String, String> out = new LinkedHashMap<>();
        ietf.write(decision, 200, out::put);
        boolean next = dialect == HeaderDialect.IETF_NEXT;
        List<ListElement<?>> policies = new ArrayList<>();
        List<ListElement<?>> limits = new ArrayList<>();
        for (PolicyOutcome o : outcomes) {
          QuotaPolicy p = o.policy();
          Map<String, Object> pp = new LinkedHashMap<>();
          pp.put("q", sf(p.quota()));
          if (p.unit() != QuotaUnit.REQUESTS) {
            pp.put("qu", p.unit().token());
          }
          pp.put("w", p.windowSeconds());
          Map<String, Object> lp = new LinkedHashMap<>();
          lp.put(next ? "a" : "r", sf(o.remaining()));
          // draft-09 section 6: a violated policy's t is Retry-After; draft-10 and -11: its own
          // time until more quota, never later than Retry-After.
          long t = dialect == HeaderDialect.DRAFT_09
              ? (!o.allowed() ? retry : o.resetSeconds())
              : (!o.allowed() ? Math.min(retry, o.nextQuotaSeconds()) : o.nextQuotaSeconds());
          lp.put(next ? "w" : "t", t);
          if (pks.containsKey(p)) {
            pp.put("pk", pks.get(p));
            lp.put("pk", pks.get(p));
          }
          policies.add(StringItem.valueOf(p.name()).withParams(Parameters.valueOf(pp)));
          limits.add(StringItem.valueOf(p.name()).withParams(Parameters.valueOf(lp)));
        }
        assertThat(out.get("RateLimit-Policy")).as(dialect + " " + where)
            .isEqualTo(StructuredFields.serialise(OuterList.valueOf(policies)));
        assertThat(out.get("RateLimit")).as(dialect + " " + where)
            .isEqualTo(StructuredFields.serialise(OuterList.valueOf(limits)));
      }

      PolicyOutcome most = decision.mostConstraining();
      long mostT = !most.allowed() ? retry : most.resetSeconds();
      List<ListElement<?>> legacy = new ArrayList<>();
      for (PolicyOutcome o : outcomes) {
        legacy.add(IntegerItem.valueOf(sf(o.policy().quota()))
            .withParams(Parameters.valueOf(Map.of("w", o.policy().windowSeconds()))));
      }
      Map<String, String> d07 = new LinkedHashMap<>();
      RateLimitHeaders.builder().dialects(HeaderDialect.DRAFT_07).build().write(decision, 200, d07::put);
      Map<String, ListElement<?>> dict = new LinkedHashMap<>();
      dict.put("limit", IntegerItem.valueOf(sf(most.policy().quota())));
      dict.put("remaining", IntegerItem.valueOf(sf(most.remaining())));
      dict.put("reset", IntegerItem.valueOf(mostT));
      assertThat(d07.get("RateLimit")).as(where).isEqualTo(StructuredFields.serialise(Dictionary.valueOf(dict)));
      assertThat(d07.get("RateLimit-Policy")).as(where).isEqualTo(StructuredFields.serialise(OuterList.valueOf(legacy)));

      Map<String, String> d03 = new LinkedHashMap<>();
      RateLimitHeaders.builder().dialects(HeaderDialect.DRAFT_03).build().write(decision, 200, d03::put);
      List<ListElement<?>> withExpiring = new ArrayList<>();
      withExpiring.add(IntegerItem.valueOf(sf(most.policy().quota())));
      withExpiring.addAll(legacy);
      assertThat(d03.get("RateLimit-Limit")).as(where).isEqualTo(StructuredFields.serialise(OuterList.valueOf(withExpiring)));
      assertThat(d03.get("RateLimit-Remaining")).as(where).isEqualTo(StructuredFields.serialise(IntegerItem.valueOf(sf(most.remaining()))));
      assertThat(d03.get("RateLimit-Reset")).as(where).isEqualTo(StructuredFields.serialise(IntegerItem.valueOf(mostT)));
    }
  }

  static long sf(long v) {
    return Math.min(v, 999_999_999_999_999L);
  }

  static QuotaPolicy randomPolicy(SplittableRandom random) {
    StringBuilder name = new StringBuilder().append(NAME_START.charAt(random.nextInt(NAME_START.length())));
    int len = random.nextInt(QuotaPolicy.MAX_NAME_LENGTH);
    for (int i = 0; i < len; i++) {
      name.append(NAME_REST.charAt(random.nextInt(NAME_REST.length())));
    }
    QuotaUnit unit = QuotaUnit.values()[random.nextInt(3)];
    long window = 1 + random.nextLong(QuotaPolicy.MAX_WINDOW.getSeconds());
    long quota = unit == QuotaUnit.CONCURRENT_REQUESTS ? 1 + random.nextLong(100_000)
        : 1 + random.nextLong(random.nextBoolean() ? 1000 : QuotaPolicy.MAX_QUOTA);
    Algorithm algorithm = unit == QuotaUnit.CONCURRENT_REQUESTS ? Algorithm.CONCURRENCY : Algorithm.FIXED_WINDOW;
    return QuotaPolicy.builder(name.toString()).quota(quota).unit(unit).window(Duration.ofSeconds(window))
        .algorithm(algorithm).build();
  }
}
