package dev.headroom.vend;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.Algorithm;
import dev.headroom.InMemoryStore;
import dev.headroom.ManualTicker;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.vend.format.VendRequest;
import dev.headroom.vend.format.VendRequestReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** Shared test setup: a manual clock, an in-memory store, and JSON tree comparison. */
final class Fixtures {

  static final ObjectMapper MAPPER = new ObjectMapper();

  final ManualTicker ticker = ManualTicker.atFixedInstant();
  final QuotaLimiter limiter = QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build());
  final VendRequestReader reader = VendRequestReader.standard();

  static QuotaPolicy perMinute(String name, long quota) {
    return QuotaPolicy.builder(name).quota(quota).window(Duration.ofMinutes(1))
        .algorithm(Algorithm.FIXED_WINDOW).build();
  }

  VendRateLimiter vend(VendRateLimits limits) {
    return VendRateLimiter.builder(limits).limiter(limiter).build();
  }

  VendRequest request(String json) {
    return reader.parse(utf8(json));
  }

  /** A call of {@code function} declaring the rate-limit extension, from {@code caller} (or none). */
  VendRequest call(String id, String function, String caller) {
    return request("{\"protocol\":{\"name\":\"vend\",\"version\":\"0.1.0\"},\"id\":\"" + id + "\","
        + "\"call\":{\"function\":\"" + function + "\",\"arguments\":{}},"
        + (caller == null ? "" : "\"context\":{\"caller\":\"" + caller + "\"},")
        + "\"extensions\":[{\"urn\":\"urn:vnd:ext:rate-limit\",\"options\":{}}]}");
  }

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static JsonNode tree(byte[] json) {
    try {
      return MAPPER.readTree(json);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static JsonNode tree(String json) {
    return tree(utf8(json));
  }

  /** Asserts two JSON documents are the same tree (member order aside). */
  static void assertSameJson(byte[] actual, String expected) {
    assertThat(tree(actual)).as(new String(actual, StandardCharsets.UTF_8)).isEqualTo(tree(expected));
  }
}
