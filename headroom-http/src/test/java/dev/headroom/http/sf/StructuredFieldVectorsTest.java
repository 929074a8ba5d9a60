package dev.headroom.http.sf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.greenbytes.http.sfv.BooleanItem;
import org.greenbytes.http.sfv.ByteSequenceItem;
import org.greenbytes.http.sfv.DecimalItem;
import org.greenbytes.http.sfv.Dictionary;
import org.greenbytes.http.sfv.InnerList;
import org.greenbytes.http.sfv.IntegerItem;
import org.greenbytes.http.sfv.Item;
import org.greenbytes.http.sfv.ListElement;
import org.greenbytes.http.sfv.OuterList;
import org.greenbytes.http.sfv.Parameters;
import org.greenbytes.http.sfv.Parser;
import org.greenbytes.http.sfv.StringItem;
import org.greenbytes.http.sfv.TokenItem;
import org.greenbytes.http.sfv.Type;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The HTTP WG Structured Field test vectors (RFC 8941 / RFC 9651), copied with their licence into
 * {@code src/test/resources/structured-field-tests}, run against the codec Headroom relies on.
 * Every case of the files covering lists, items, parameters, strings, tokens, integers and
 * decimals, booleans and byte sequences runs: {@code must_fail} cases must fail, the others must
 * parse to {@code expected} and serialise to {@code canonical} (or {@code raw}).
 *
 * <p>Parsing here calls the library without {@link StructuredFields}' size bounds, because
 * {@code large-generated.json} deliberately exceeds them; the bounds are a policy of the RateLimit
 * parsers, tested with them.
 */
class StructuredFieldVectorsTest {

  /** The files covering the types the RateLimit fields use (dates and display strings are RFC 9651 only). */
  static final List<String> FILES = List.of("list.json", "listlist.json", "item.json", "param-list.json",
      "param-listlist.json", "param-dict.json", "dictionary.json", "string.json", "string-generated.json",
      "token.json", "token-generated.json", "number.json", "number-generated.json", "boolean.json",
      "binary.json", "key-generated.json", "examples.json", "large-generated.json");

  static final List<String> SERIALISATION_FILES = List.of("serialisation-tests/number.json",
      "serialisation-tests/string-generated.json", "serialisation-tests/token-generated.json",
      "serialisation-tests/key-generated.json");

  static final ObjectMapper JSON = new ObjectMapper().enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);

  static Stream<Arguments> parsingCases() {
    return cases(FILES);
  }

  static Stream<Arguments> serialisationCases() {
    return cases(SERIALISATION_FILES);
  }

  private static Stream<Arguments> cases(List<String> files) {
    List<Arguments> all = new ArrayList<>();
    for (String file : files) {
      try (InputStream in = StructuredFieldVectorsTest.class.getResourceAsStream("/structured-field-tests/" + file)) {
        for (JsonNode c : JSON.readTree(in)) {
          all.add(Arguments.of(Named.of(file + ": " + c.get("name").asText(), c)));
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return all.stream();
  }

  @ParameterizedTest
  @MethodSource("parsingCases")
  void parsesAndSerialisesCanonically(JsonNode c) {
    List<String> raw = new ArrayList<>();
    c.get("raw").forEach(n -> raw.add(n.asText()));
    String type = c.get("header_type").asText();
    boolean mustFail = c.path("must_fail").asBoolean(false);
    boolean canFail = c.path("can_fail").asBoolean(false);
    if (mustFail) {
      assertThatThrownBy(() -> parse(type, raw)).isInstanceOf(IllegalArgumentException.class);
      return;
    }
    Type<?> parsed;
    try {
      parsed = parse(type, raw);
    } catch (IllegalArgumentException e) {
      if (canFail) {
        return;
      }
      throw e;
    }
    assertThat(toJson(type, parsed)).isEqualTo(normalise(c.get("expected")));
    JsonNode canonical = c.has("canonical") ? c.get("canonical") : c.get("raw");
    String expectedText = canonical.size() == 0 ? "" : canonical.get(0).asText();
    assertThat(StructuredFields.serialise(parsed)).isEqualTo(expectedText);
  }

  @ParameterizedTest
  @MethodSource("serialisationCases")
  void serialisesOrRefuses(JsonNode c) {
    String type = c.get("header_type").asText();
    if (c.path("must_fail").asBoolean(false)) {
      Throwable t = catchThrowable(() -> StructuredFields.serialise(fromJson(type, c.get("expected"))));
      assertThat(t).isInstanceOf(IllegalArgumentException.class);
      return;
    }
    String expectedText = c.get("canonical").size() == 0 ? "" : c.get("canonical").get(0).asText();
    assertThat(StructuredFields.serialise(fromJson(type, c.get("expected")))).isEqualTo(expectedText);
  }

  // ---- parsing through the library

  static Type<?> parse(String type, List<String> raw) {
    Parser p = new Parser(raw);
    switch (type) {
      case "list": return p.parseList();
      case "dictionary": return p.parseDictionary();
      case "item": return p.parseItem();
      default: throw new AssertionError(type);
    }
  }

  // ---- library values to the vectors' JSON shape

  static JsonNode toJson(String type, Type<?> value) {
    Object o;
    switch (type) {
      case "list": {
        List<Object> members = new ArrayList<>();
        for (ListElement<?> e : ((OuterList) value).get()) {
          members.add(member(e));
        }
        o = members;
        break;
      }
      case "dictionary": {
        List<Object> members = new ArrayList<>();
        ((Dictionary) value).get().forEach((k, v) -> members.add(List.of(k, member(v))));
        o = members;
        break;
      }
      default:
        o = item((Item<?>) value);
    }
    return normalise(JSON.valueToTree(o));
  }

  private static Object member(ListElement<?> e) {
    if (e instanceof InnerList) {
      List<Object> items = new ArrayList<>();
      for (Item<?> i : ((InnerList) e).get()) {
        items.add(item(i));
      }
      return List.of(items, params(((InnerList) e).getParams()));
    }
    return item((Item<?>) e);
  }

  private static Object item(Item<?> i) {
    return List.of(bare(i), params(i.getParams()));
  }

  private static List<Object> params(Parameters p) {
    List<Object> out = new ArrayList<>();
    p.forEach((k, v) -> out.add(List.of(k, bare(v))));
    return out;
  }

  private static Object bare(Item<?> i) {
    if (i instanceof TokenItem) {
      return Map.of("__type", "token", "value", ((TokenItem) i).get());
    }
    if (i instanceof ByteSequenceItem) {
      ByteBuffer b = ((ByteSequenceItem) i).get();
      byte[] bytes = new byte[b.remaining()];
      b.duplicate().get(bytes);
      return Map.of("__type", "binary", "value", Base32.encode(bytes));
    }
    if (i instanceof DecimalItem) {
      return ((DecimalItem) i).get();
    }
    return i.get();
  }

  /** Numbers compare by value (42 == 42.0 is false: integers and decimals are told apart by scale). */
  static JsonNode normalise(JsonNode n) {
    if (n.isArray()) {
      List<JsonNode> out = new ArrayList<>();
      n.forEach(c -> out.add(normalise(c)));
      return JSON.valueToTree(out);
    }
    if (n.isObject()) {
      Map<String, JsonNode> out = new LinkedHashMap<>();
      n.fields().forEachRemaining(e -> out.put(e.getKey(), normalise(e.getValue())));
      if ("binary".equals(n.path("__type").asText())) {
        out.put("value", JSON.getNodeFactory().textNode(Base32.encode(Base32.decode(n.get("value").asText()))));
      }
      return JSON.valueToTree(out);
    }
    if (n.isIntegralNumber()) {
      return JSON.getNodeFactory().textNode("int:" + n.bigIntegerValue());
    }
    if (n.isNumber()) {
      return JSON.getNodeFactory().textNode("dec:" + n.decimalValue().stripTrailingZeros().toPlainString());
    }
    return n;
  }

  // ---- the vectors' JSON shape to library values (for the serialisation tests)

  static Type<?> fromJson(String type, JsonNode n) {
    switch (type) {
      case "list": {
        List<ListElement<?>> members = new ArrayList<>();
        n.forEach(m -> members.add(memberFromJson(m)));
        return OuterList.valueOf(members);
      }
      case "dictionary": {
        Map<String, ListElement<?>> members = new LinkedHashMap<>();
        n.forEach(m -> members.put(m.get(0).asText(), memberFromJson(m.get(1))));
        return Dictionary.valueOf(members);
      }
      default:
        return itemFromJson(n);
    }
  }

  private static ListElement<?> memberFromJson(JsonNode m) {
    if (m.get(0).isArray()) {
      List<Item<?>> items = new ArrayList<>();
      m.get(0).forEach(i -> items.add(itemFromJson(i)));
      return InnerList.valueOf(items).withParams(paramsFromJson(m.get(1)));
    }
    return itemFromJson(m);
  }

  private static Item<?> itemFromJson(JsonNode i) {
    return bareFromJson(i.get(0)).withParams(paramsFromJson(i.get(1)));
  }

  private static Parameters paramsFromJson(JsonNode p) {
    Map<String, Object> map = new LinkedHashMap<>();
    p.forEach(e -> map.put(e.get(0).asText(), bareFromJson(e.get(1))));
    return Parameters.valueOf(map);
  }

  private static Item<?> bareFromJson(JsonNode b) {
    if (b.isObject()) {
      String t = b.get("__type").asText();
      switch (t) {
        case "token": return TokenItem.valueOf(b.get("value").asText());
        case "binary": return ByteSequenceItem.valueOf(Base32.decode(b.get("value").asText()));
        default: throw new AssertionError("unsupported __type " + t);
      }
    }
    if (b.isBoolean()) {
      return BooleanItem.valueOf(b.asBoolean());
    }
    if (b.isIntegralNumber()) {
      return IntegerItem.valueOf(b.longValue());
    }
    if (b.isNumber()) {
      return StructuredFields.decimal(b.decimalValue());
    }
    return StringItem.valueOf(b.asText());
  }

  /** RFC 4648 section 6 base32, as the vectors carry byte sequences. */
  static final class Base32 {
    private static final String ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

    static byte[] decode(String s) {
      String t = s.replace("=", "");
      byte[] out = new byte[t.length() * 5 / 8];
      long buffer = 0;
      int bits = 0;
      int n = 0;
      for (char c : t.toCharArray()) {
        buffer = (buffer << 5) | ALPHABET.indexOf(c);
        bits += 5;
        if (bits >= 8) {
          out[n++] = (byte) (buffer >> (bits - 8));
          bits -= 8;
        }
      }
      return out;
    }

    static String encode(byte[] bytes) {
      StringBuilder sb = new StringBuilder();
      long buffer = 0;
      int bits = 0;
      for (byte b : bytes) {
        buffer = (buffer << 8) | (b & 0xff);
        bits += 8;
        while (bits >= 5) {
          sb.append(ALPHABET.charAt((int) (buffer >> (bits - 5)) & 31));
          bits -= 5;
        }
      }
      if (bits > 0) {
        sb.append(ALPHABET.charAt((int) (buffer << (5 - bits)) & 31));
      }
      while (sb.length() % 8 != 0) {
        sb.append('=');
      }
      return sb.toString();
    }
  }
}
