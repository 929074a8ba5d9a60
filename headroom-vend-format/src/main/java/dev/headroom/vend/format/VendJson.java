package dev.headroom.vend.format;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Locale;

/**
 * The Jackson configuration of the vend wire format, in one place: the reader of envelopes and
 * the enforcement module (headroom-vend) read and write vend JSON with it, so both agree.
 *
 * <p>Reading is bounded (nesting depth, string and number lengths) and strict: a duplicated member
 * name is an error, so that two parsers can never disagree on which value a request carries.
 * Numbers keep their exact value ({@code BigDecimal} for fractions, trailing zeroes kept), so that
 * rewriting an upstream document never changes a number it carries.
 *
 * <p>Thread-safe: mappers are immutable once built.
 */
public final class VendJson {

  /** Longest string value accepted anywhere in a document, in characters. */
  static final int MAX_STRING_LENGTH = 1 << 20;

  /** Longest number accepted anywhere in a document, in characters. */
  static final int MAX_NUMBER_LENGTH = 256;

  /** The node factory; exactness of numbers is set on the reader (trailing zeroes kept). */
  public static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private static final ObjectMapper WRITER = JsonMapper.builder().nodeFactory(NODES).build();

  private VendJson() {}

  /** A reading mapper that refuses documents nested deeper than {@code maxDepth}. */
  public static ObjectMapper reader(int maxDepth) {
    JsonFactory factory = JsonFactory.builder()
        .streamReadConstraints(StreamReadConstraints.builder()
            .maxNestingDepth(maxDepth)
            .maxStringLength(MAX_STRING_LENGTH)
            .maxNumberLength(MAX_NUMBER_LENGTH)
            .build())
        .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
        .build();
    return JsonMapper.builder(factory)
        .nodeFactory(NODES)
        .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
        .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
        .disable(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES)
        .build();
  }

  /** A streaming parser over bytes, with the reader's constraints. */
  public static JsonParser parser(ObjectMapper reader, byte[] bytes, int offset, int length) throws IOException {
    return reader.getFactory().createParser(bytes, offset, length);
  }

  /** A new empty object node. */
  public static ObjectNode object() {
    return NODES.objectNode();
  }

  /** Compact UTF-8 JSON of a node. */
  public static byte[] bytes(JsonNode node) {
    try {
      return WRITER.writeValueAsBytes(node);
    } catch (JsonProcessingException e) {
      // A tree of JsonNodes always serialises; reaching this is a bug in this module.
      throw new UncheckedIOException(e);
    }
  }

  /** Describes a JSON value for an error message: its type and a short rendering. */
  public static String describe(JsonNode node) {
    if (node == null || node.isMissingNode()) {
      return "nothing";
    }
    String type;
    switch (node.getNodeType()) {
      case STRING:
        type = "string";
        break;
      case NUMBER:
        type = "number";
        break;
      case BOOLEAN:
        type = "boolean";
        break;
      case NULL:
        return "null";
      case ARRAY:
        return "an array of " + node.size() + (node.size() == 1 ? " element" : " elements");
      case OBJECT:
        return "an object";
      default:
        type = node.getNodeType().name().toLowerCase(Locale.ROOT);
    }
    String text = node.isTextual() ? "\"" + printable(node.textValue()) + "\"" : printable(node.toString());
    return type + " " + text;
  }

  /** Shortens and escapes a value so that it can be quoted in an error message. */
  public static String printable(String s) {
    return printable(s, 64);
  }

  /** Shortens to {@code limit} characters and escapes a value to quote it in an error message. */
  public static String printable(String s, int limit) {
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < s.length() && i < limit; i++) {
      char c = s.charAt(i);
      if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') {
        out.append(String.format("\\u%04x", (int) c));
      } else {
        out.append(c);
      }
    }
    if (s.length() > limit) {
      out.append("...(").append(s.length()).append(" chars)");
    }
    return out.toString();
  }
}
