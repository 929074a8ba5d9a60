package dev.headroom.vend.format;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/** Shared test setup of the format's tests: JSON documents as bytes and as trees. */
final class Fixtures {

  static final ObjectMapper MAPPER = new ObjectMapper();

  private Fixtures() {}

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
}
