package dev.headroom.vend.format;

import static dev.headroom.vend.format.Fixtures.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayInputStream;
import java.nio.ByteBuffer;
import java.util.OptionalLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Malformed vend request envelopes (vend-notes.md, "Envelope"; "HTTP transport": 400
 * PARSE_ERROR / INVALID_REQUEST): each gets the right code and a message naming the field, the
 * value and what was expected.
 */
class VendRequestReaderTest {

  private final VendRequestReader reader = VendRequestReader.standard();

  private static final String PROTOCOL = "\"protocol\":{\"name\":\"vend\",\"version\":\"0.1.0\"}";
  private static final String CALL = "\"call\":{\"function\":\"orders.create\"}";

  private VendRequestException refuse(String body) {
    return refuse(reader, utf8(body));
  }

  private static VendRequestException refuse(VendRequestReader r, byte[] body) {
    try {
      r.parse(body);
    } catch (VendRequestException e) {
      return e;
    }
    throw new AssertionError("expected a VendRequestException for " + new String(body));
  }

  static Stream<Arguments> notJson() {
    return Stream.of(
        Arguments.of("{\"id\": "),
        Arguments.of("not json"),
        Arguments.of("{'id': 'x'}"),
        Arguments.of(""),
        Arguments.of("{} {}"),
        Arguments.of("{}x"));
  }

  @ParameterizedTest
  @MethodSource("notJson")
  void parseError_whenTheBodyIsNotOneJsonDocument(String body) {
    VendRequestException e = refuse(body);
    assertThat(e.error().code()).isEqualTo(VendError.PARSE_ERROR);
    assertThat(e.httpStatus()).isEqualTo(400);
    assertThat(e.getMessage()).startsWith("request: expected");
    assertThat(e.id()).isEmpty();
    JsonNode body2 = Fixtures.tree(e.responseBody());
    assertThat(body2.get("id").isNull()).isTrue();
    assertThat(body2.at("/errors/0/code").asText()).isEqualTo("PARSE_ERROR");
    assertThat(body2.at("/errors/0/retryable").asBoolean()).isFalse();
    assertThat(body2.get("result").isNull()).isTrue();
    assertThat(body2.at("/protocol/name").asText()).isEqualTo("vend");
    assertThat(body2.has("extensions")).isFalse();
  }

  static Stream<Arguments> invalidEnvelopes() {
    return Stream.of(
        // field, body, words the message must hold
        Arguments.of("[1,2]", "request: expected a JSON object", "array"),
        Arguments.of("\"vend\"", "request: expected a JSON object", "string \"vend\""),
        Arguments.of("{" + PROTOCOL + "," + CALL + "}", "id: expected a non-empty string", "got nothing"),
        Arguments.of("{" + PROTOCOL + ",\"id\":123," + CALL + "}", "id: expected a non-empty string", "number 123"),
        Arguments.of("{" + PROTOCOL + ",\"id\":null," + CALL + "}", "id: expected a non-empty string", "got null"),
        Arguments.of("{" + PROTOCOL + ",\"id\":{\"a\":1}," + CALL + "}", "id: expected a non-empty string", "an object"),
        Arguments.of("{" + PROTOCOL + ",\"id\":[\"a\"]," + CALL + "}", "id: expected a non-empty string", "an array"),
        Arguments.of("{" + PROTOCOL + ",\"id\":\"\"," + CALL + "}", "id: expected a non-empty string", "string \"\""),
        Arguments.of("{" + PROTOCOL + ",\"id\":true," + CALL + "}", "id: expected a non-empty string", "boolean true"),
        Arguments.of("{\"id\":\"r1\"," + CALL + "}", "protocol: expected an object", "got nothing"),
        Arguments.of("{\"protocol\":{\"name\":\"jsonrpc\",\"version\":\"0.1.0\"},\"id\":\"r1\"," + CALL + "}",
            "protocol.name: expected \"vend\"", "string \"jsonrpc\""),
        Arguments.of("{\"protocol\":{\"name\":\"vend\",\"version\":1},\"id\":\"r1\"," + CALL + "}",
            "protocol.version: expected a version string", "number 1"),
        Arguments.of("{\"protocol\":{\"name\":\"vend\"},\"id\":\"r1\"," + CALL + "}",
            "protocol.version: expected a version string", "got nothing"),
        Arguments.of("{" + PROTOCOL + ",\"id\":\"r1\"}", "call: expected an object", "got nothing"),
        Arguments.of("{" + PROTOCOL + ",\"id\":\"r1\",\"call\":\"orders.create\"}", "call: expected an object", "string \"orders.create\""),
        Arguments.of("{" + PROTOCOL + ",\"id\":\"r1\",\"call\":{}}", "call.function: expected a function name in <service>.<action> dot form", "got nothing"),
        Arguments.of("{" + PROTOCOL + ",\"id\":\"r1\",\"call\":{\"function\":\"create\"}}", "call.function: expected", "string \"create\""),
        Arguments.of("{" + PROTOCOL + ",\"id\":\"r1\",\"call\":{\"function\":\"orders..create\"}}", "call.function: expected", "\"orders..create\""),
        Arguments.of("{" + PROTOCOL + ",\"id\":\"r1\",\"call\":{\"function\":\"orders.create \"}}", "call.function: expected", "\"orders.create \""),
        Arguments.of("{" + PROTOCOL + ",\"id\":\"r1\",\"call\":{\"function\":42}}", "call.function: expected", "number 42"),
        Arguments.of("{" + PROTOCOL + ",\"id\":\"r1\",\"call\":{\"function\":\"orders.create\",\"version\":1}}",
            "call.version: expected a string", "number 1"),
        Arguments.of("{" + PROTOCOL + ",\"id\":\"r1\",\"call\":{\"function\":\"orders.create\",\"arguments\":[1]}}",
            "call.arguments: expected an object", "an array of 1 element"),
        Arguments.of("{" + PROTOCOL + ",\"id\":\"r1\",\"call\":{\"function\":\"orders.create\",\"arguments\":null}}",
            "call.arguments: expected an object", "got null"),
        Arguments.of("{" + PROTOCOL + ",\"id\":\"r1\"," + CALL + ",\"context\":\"billing\"}", "context: expected an object", "string \"billing\""),
        Arguments.of("{" + PROTOCOL + ",\"id\":\"r1\"," + CALL + ",\"context\":{\"caller\":7}}", "context.caller: expected a string", "number 7"),
        Arguments.of("{" + PROTOCOL + ",\"id\":\"r1\"," + CALL + ",\"context\":{\"caller\":\"\"}}", "context.caller: expected a string", "string \"\""),
        Arguments.of("{" + PROTOCOL + ",\"id\":\"r1\"," + CALL + ",\"extensions\":{}}", "extensions: expected an array", "an object"),
        Arguments.of("{" + PROTOCOL + ",\"id\":\"r1\"," + CALL + ",\"extensions\":[\"urn:vnd:ext:rate-limit\"]}",
            "extensions[0]: expected an object", "string \"urn:vnd:ext:rate-limit\""),
        Arguments.of("{" + PROTOCOL + ",\"id\":\"r1\"," + CALL + ",\"extensions\":[{\"urn\":\"urn:a\"},{\"options\":{}}]}",
            "extensions[1].urn: expected a non-empty string", "got nothing"),
        Arguments.of("{" + PROTOCOL + ",\"id\":\"r1\"," + CALL + ",\"extensions\":[{\"urn\":\"urn:a\",\"options\":[]}]}",
            "extensions[0].options: expected an object", "an array of 0 elements"),
        Arguments.of("{" + PROTOCOL + ",\"id\":\"r1\"," + CALL + ",\"extensions\":[{\"urn\":\"urn:vnd:ext:rate-limit\",\"options\":{\"scope\":\"tenant\"}}]}",
            "extensions[0].options.scope: expected global, service, function or user", "\"tenant\""),
        Arguments.of("{" + PROTOCOL + ",\"id\":\"r1\",\"id\":\"r2\"," + CALL + "}", "request: expected each member name once", "id"));
  }

  @ParameterizedTest
  @MethodSource("invalidEnvelopes")
  void invalidRequest_namesTheFieldTheValueAndWhatWasExpected(String body, String expected, String value) {
    VendRequestException e = refuse(body);
    assertThat(e.error().code()).isEqualTo(VendError.INVALID_REQUEST);
    assertThat(e.httpStatus()).isEqualTo(400);
    assertThat(e.getMessage()).startsWith(expected).contains(value);
    assertThat(Fixtures.tree(e.responseBody()).at("/errors/0/message").asText()).isEqualTo(e.getMessage());
  }

  @Test
  void invalidRequest_echoesTheIdOnceItCouldBeRead() {
    VendRequestException e = refuse("{\"protocol\":{\"name\":\"vend\",\"version\":\"0.2.0\"},\"id\":\"req_9\",\"call\":{\"function\":\"x\"}}");
    assertThat(e.id()).contains("req_9");
    JsonNode body = Fixtures.tree(e.responseBody());
    assertThat(body.get("id").asText()).isEqualTo("req_9");
    assertThat(body.at("/protocol/version").asText()).isEqualTo("0.2.0");
    assertThat(body.at("/errors/0/code").asText()).isEqualTo("INVALID_REQUEST");
  }

  @Test
  void invalidRequest_whenLargerThanMaxBytes_fromArrayBufferAndStream() throws Exception {
    VendRequestReader small = VendRequestReader.builder().maxBytes(100).build();
    String body = "{" + PROTOCOL + ",\"id\":\"r1\",\"call\":{\"function\":\"orders.create\",\"arguments\":{\"pad\":\""
        + "x".repeat(200) + "\"}}}";
    VendRequestException e = refuse(small, utf8(body));
    assertThat(e.error().code()).isEqualTo(VendError.INVALID_REQUEST);
    assertThat(e.getMessage()).isEqualTo("request: expected a body of at most 100 bytes, got " + utf8(body).length + " bytes");
    assertThatThrownBy(() -> small.read(new ByteArrayInputStream(utf8(body))))
        .isInstanceOf(VendRequestException.class)
        .hasMessage("request: expected a body of at most 100 bytes, got more");
    assertThatThrownBy(() -> small.parse(ByteBuffer.allocateDirect(300).put(utf8(body), 0, 300).flip()))
        .isInstanceOf(VendRequestException.class)
        .hasMessageStartingWith("request: expected a body of at most 100 bytes");
  }

  // A transport that meets the bound first (a proxy counting a body) answers the reader's envelope.
  @Test
  void bodyTooLarge_isTheReadersAnswerForATransportThatCountsTheBody() throws Exception {
    VendRequestException counted = VendRequestException.bodyTooLarge(100, OptionalLong.empty());
    assertThat(counted.getMessage()).isEqualTo("request: expected a body of at most 100 bytes, got more");
    assertThat(counted.httpStatus()).isEqualTo(400);
    assertThat(counted.id()).isEmpty();
    assertThat(Fixtures.MAPPER.readTree(counted.responseBody())).isEqualTo(Fixtures.MAPPER.readTree(
        "{" + PROTOCOL + ",\"id\":null,\"result\":null,\"errors\":[{\"code\":\"INVALID_REQUEST\","
            + "\"message\":\"request: expected a body of at most 100 bytes, got more\",\"retryable\":false}]}"));
    assertThat(VendRequestException.bodyTooLarge(100, OptionalLong.of(300)).getMessage())
        .isEqualTo(refuse(VendRequestReader.builder().maxBytes(100).build(), new byte[300]).getMessage());
  }

  @Test
  void invalidRequest_whenNestedDeeperThanMaxDepth() {
    VendRequestReader shallow = VendRequestReader.builder().maxDepth(8).build();
    String deep = "[".repeat(20) + "]".repeat(20);
    String body = "{" + PROTOCOL + ",\"id\":\"r1\",\"call\":{\"function\":\"orders.create\",\"arguments\":{\"a\":" + deep + "}}}";
    VendRequestException e = refuse(shallow, utf8(body));
    assertThat(e.error().code()).isEqualTo(VendError.INVALID_REQUEST);
    assertThat(e.getMessage()).startsWith("request: expected JSON nested at most 8 levels deep");
    // The default depth accepts it.
    assertThat(reader.parse(utf8(body)).arguments().get("a").isArray()).isTrue();
  }

  @Test
  void validEnvelope_readsEveryFieldAndIgnoresUnknownMembers() throws Exception {
    String body = "{" + PROTOCOL + ",\"id\":\"r1\",\"call\":{\"function\":\"billing.invoices.create\"},"
        + "\"context\":{\"caller\":\"checkout\",\"trace\":\"abc\"},\"future\":[1],"
        + "\"extensions\":[{\"urn\":\"urn:vnd:ext:tracing\"},{\"urn\":\"urn:vnd:ext:rate-limit\",\"options\":{\"scope\":\"user\"}}]}";
    for (VendRequest r : new VendRequest[] {reader.parse(utf8(body)), reader.read(new ByteArrayInputStream(utf8(body))),
        reader.parse(ByteBuffer.allocateDirect(body.length()).put(utf8(body)).flip())}) {
      assertThat(r.function()).isEqualTo("billing.invoices.create");
      assertThat(r.functionVersion()).isEmpty();
      assertThat(r.arguments()).isEmpty();
      assertThat(r.caller()).contains("checkout");
      assertThat(r.context().get("trace").asText()).isEqualTo("abc");
      assertThat(r.declares("urn:vnd:ext:tracing")).isTrue();
      assertThat(r.declaresRateLimit()).isTrue();
      assertThat(r.requestedScope()).contains(Scope.USER);
      assertThat(r.isCapabilities()).isFalse();
    }
  }

  @Test
  void returnedJsonIsACopy_theRequestStaysImmutable() {
    VendRequest r = reader.parse(utf8("{" + PROTOCOL + ",\"id\":\"r1\",\"call\":{\"function\":\"a.b\",\"arguments\":{\"n\":1}}}"));
    r.arguments().put("n", 2);
    assertThat(r.arguments().get("n").asInt()).isEqualTo(1);
  }

  @Test
  void builderRefusesAbsurdBounds() {
    assertThatThrownBy(() -> VendRequestReader.builder().maxBytes(0)).hasMessage("maxBytes: expected 64 to 67108864 bytes, got 0");
    assertThatThrownBy(() -> VendRequestReader.builder().maxDepth(2000)).hasMessage("maxDepth: expected 4 to 1000, got 2000");
  }
}
