package dev.headroom.http.headers;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.http.headers.Diagnostic.Kind;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Property: every value each vendor grammar allows ({@link VendorValues}) reads as the number,
 * delay or instant it spells (saturated at {@link QuotaPolicyItem#MAX_INTEGER}), and values it does
 * not allow read as nothing: negative, empty, 20 digits (a count that saturates), {@code 99999h},
 * an instant in year 9999 (valid and far). Then every reader, fed values from its grammar and
 * outside it, never fails and keeps only what the model allows. Random cases from a fixed seed;
 * a failure names the seed and the case to replay.
 */
class VendorValuesPropertyTest {

  static final long SEED = 0x5EED_0032L;
  static final int CASES = 5_000;
  static final BigDecimal MAX = BigDecimal.valueOf(QuotaPolicyItem.MAX_INTEGER);
  static final String[] GO_UNITS = {"h", "m", "s", "ms", "us", "µs", "ns"};
  static final long[] GO_NANOS = {3_600_000_000_000L, 60_000_000_000L, 1_000_000_000L, 1_000_000L, 1_000L, 1_000L, 1L};

  static String digits(SplittableRandom r, int min, int max) {
    StringBuilder sb = new StringBuilder();
    int n = min + r.nextInt(max - min + 1);
    for (int i = 0; i < n; i++) {
      sb.append((char) ('0' + r.nextInt(10)));
    }
    return sb.toString();
  }

  static Duration expected(BigDecimal seconds) {
    if (seconds.compareTo(MAX) >= 0) {
      return Duration.ofSeconds(QuotaPolicyItem.MAX_INTEGER);
    }
    BigDecimal nanos = seconds.movePointRight(9).setScale(0, RoundingMode.CEILING);
    return Duration.ofNanos(0).plusSeconds(nanos.divideToIntegralValue(BigDecimal.valueOf(1_000_000_000L)).longValueExact())
        .plusNanos(nanos.remainder(BigDecimal.valueOf(1_000_000_000L)).longValueExact());
  }

  @Test
  void countsReadAsTheirValueSaturated() {
    SplittableRandom r = new SplittableRandom(SEED);
    for (int c = 0; c < CASES; c++) {
      String v = digits(r, 1, 64);
      long want = new BigInteger(v).min(BigInteger.valueOf(QuotaPolicyItem.MAX_INTEGER)).longValueExact();
      assertThat(VendorValues.count(v)).as("seed %x case %d: %s", SEED, c, v).hasValue(want);
    }
    assertThat(VendorValues.count("99999999999999999999")).hasValue(QuotaPolicyItem.MAX_INTEGER);
    for (String bad : new String[] {"", " ", "-1", "+1", "1.5", "1e3", "0x10", "１２", "1 2", "9".repeat(65)}) {
      assertThat(VendorValues.count(bad)).as(bad).isEmpty();
    }
  }

  @Test
  void goDurationsReadAsTheirSum() {
    SplittableRandom r = new SplittableRandom(SEED);
    for (int c = 0; c < CASES; c++) {
      StringBuilder v = new StringBuilder();
      BigDecimal nanos = BigDecimal.ZERO;
      int terms = 1 + r.nextInt(4);
      for (int t = 0; t < terms; t++) {
        String number = digits(r, 1, 6) + (r.nextInt(3) == 0 ? "." + digits(r, 1, 4) : "");
        int u = r.nextInt(GO_UNITS.length);
        v.append(number).append(GO_UNITS[u]);
        nanos = nanos.add(new BigDecimal(number).multiply(BigDecimal.valueOf(GO_NANOS[u])));
      }
      assertThat(VendorValues.goDuration(v.toString())).as("seed %x case %d: %s", SEED, c, v)
          .contains(expected(nanos.movePointLeft(9)));
    }
    assertThat(VendorValues.goDuration("6m0s")).contains(Duration.ofMinutes(6));
    assertThat(VendorValues.goDuration("1h2m3.5s")).contains(Duration.ofMillis(3_723_500));
    assertThat(VendorValues.goDuration("12ms")).contains(Duration.ofMillis(12));
    assertThat(VendorValues.goDuration("0")).contains(Duration.ZERO);
    assertThat(VendorValues.goDuration("99999h")).contains(Duration.ofHours(99999));
    assertThat(VendorValues.goDuration("99999999999999999999h")).contains(Duration.ofSeconds(QuotaPolicyItem.MAX_INTEGER));
    for (String bad : new String[] {"", "-1s", "1", "s", "1x", "1.5.5s", "1h-2m", "1 s", "1S"}) {
      assertThat(VendorValues.goDuration(bad)).as(bad).isEmpty();
    }
  }

  @Test
  void decimalSecondsAndMillisecondsReadAsTheirValue() {
    SplittableRandom r = new SplittableRandom(SEED);
    for (int c = 0; c < CASES; c++) {
      String v = digits(r, 1, 20) + (r.nextBoolean() ? "." + digits(r, 1, 12) : "");
      assertThat(VendorValues.seconds(v)).as("seed %x case %d: %s", SEED, c, v).contains(expected(new BigDecimal(v)));
      assertThat(VendorValues.millis(v)).as("seed %x case %d: %s ms", SEED, c, v)
          .contains(expected(new BigDecimal(v).movePointLeft(3)));
    }
    for (String bad : new String[] {"", "-1", "-0.5", ".5", "1.", "NaN", "1e3", "1,5"}) {
      assertThat(VendorValues.seconds(bad)).as(bad).isEmpty();
    }
  }

  @Test
  void rfc3339InstantsReadAsTheInstantTheySpell() {
    SplittableRandom r = new SplittableRandom(SEED);
    long max = Instant.parse("9999-12-31T23:59:59Z").getEpochSecond();
    long min = Instant.parse("0000-01-01T00:00:00Z").getEpochSecond() + 86_400;
    for (int c = 0; c < CASES; c++) {
      Instant at = Instant.ofEpochSecond(min + r.nextLong(max - min - 86_400), r.nextBoolean() ? 0 : r.nextInt(1_000_000_000));
      ZoneOffset offset = ZoneOffset.ofTotalSeconds((r.nextInt(48) - 24) * 1800);
      String v = DateTimeFormatter.ISO_OFFSET_DATE_TIME.format(at.atOffset(offset));
      assertThat(VendorValues.instant(v)).as("seed %x case %d: %s", SEED, c, v).contains(at);
    }
    assertThat(VendorValues.instant("2026-03-26T16:00Z")).contains(Instant.parse("2026-03-26T16:00:00Z"));
    assertThat(VendorValues.instant("2016-12-31T23:59:60Z")).contains(Instant.parse("2017-01-01T00:00:00Z"));
    assertThat(VendorValues.instant("9999-12-31T23:59:59Z")).contains(Instant.parse("9999-12-31T23:59:59Z"));
    for (String bad : new String[] {"", "2026-02-30T00:00Z", "+10000-01-01T00:00Z", "-2026-01-01T00:00Z",
        "2026-03-26", "2026-03-26T16:00", "1711843260", "Mon, 04 Mar 2025 12:00:00 GMT"}) {
      assertThat(VendorValues.instant(bad)).as(bad).isEmpty();
    }
  }

  /** Values from each grammar and outside it, for every field a reader reads. */
  static final String[] SHAPES = {"count", "decimal", "go", "instant", "absurd"};

  static String value(SplittableRandom r, Instant now) {
    return switch (SHAPES[r.nextInt(SHAPES.length)]) {
      case "count" -> digits(r, 1, 20);
      case "decimal" -> digits(r, 1, 11) + "." + digits(r, 1, 3);
      case "go" -> digits(r, 1, 5) + GO_UNITS[r.nextInt(GO_UNITS.length)];
      case "instant" -> DateTimeFormatter.ISO_INSTANT.format(now.plusSeconds(r.nextLong(-100_000, 100_000_000_000L)));
      default -> new String[] {"", "-1", "99999h", "9999-12-31T23:59:59Z", "99999999999999999999", "32/40", "0/0",
          "40/32", "a;1,b;2,;", "true", "\"x\";r=1;t=1", "\u0000", " 1 "}[r.nextInt(13)];
    };
  }

  @Test
  void everyReaderKeepsOnlyWhatTheModelAllows() {
    SplittableRandom r = new SplittableRandom(SEED);
    Instant now = Instant.parse("2025-03-04T12:00:00Z");
    List<String> names = new ArrayList<>();
    for (VendorDialect d : VendorDialect.values()) {
      for (String f : d.fieldNames()) {
        if (!f.contains("{") && !f.contains("*")) {
          names.add(f);
        }
      }
    }
    names.addAll(List.of("anthropic-ratelimit-tokens-limit", "anthropic-ratelimit-tokens-remaining",
        "anthropic-ratelimit-tokens-reset", "x-ms-ratelimit-remaining-subscription-reads", "X-RateLimit-Limit-Second",
        "X-RateLimit-Remaining-Second", "X-RateLimit-Limit-Year"));
    for (int c = 0; c < CASES; c++) {
      Map<String, List<String>> h = new HashMap<>();
      for (int i = 1 + r.nextInt(6); i > 0; i--) {
        h.put(names.get(r.nextInt(names.size())), List.of(value(r, now)));
      }
      RateLimitFields f = RateLimitFields.parse(h, now);
      assertThat(f.diagnostics()).as("seed %x case %d: %s", SEED, c, h).noneMatch(d -> d.kind() == Kind.INTERNAL);
      for (ServiceLimitItem l : f.limits()) {
        l.remaining().ifPresent(n -> assertThat(n).isBetween(0L, QuotaPolicyItem.MAX_INTEGER));
        l.reset().ifPresent(t -> assertThat(t.getSeconds()).isBetween(0L, QuotaPolicyItem.MAX_INTEGER));
      }
      assertThat(f.policies()).allSatisfy(p -> assertThat(p.quota()).isBetween(0L, QuotaPolicyItem.MAX_INTEGER));
    }
  }
}
