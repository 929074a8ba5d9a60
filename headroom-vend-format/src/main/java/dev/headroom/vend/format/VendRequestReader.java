package dev.headroom.vend.format;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.regex.Pattern;

/**
 * Reads vend request envelopes (vend-notes.md, "Envelope"), bounded in size and nesting depth.
 *
 * <pre>{@code
 * VendRequestReader reader = VendRequestReader.builder().maxBytes(256 * 1024).build();
 * try {
 *   VendRequest call = reader.parse(body);
 * } catch (VendRequestException e) {
 *   respond(e.httpStatus(), e.responseBody());      // 400, a vend error envelope
 * }
 * }</pre>
 *
 * <p>What is checked, each failure naming the field, the value and what was expected:
 * <ul>
 *   <li>the body is at most {@link Builder#maxBytes(int)} bytes and nested at most
 *       {@link Builder#maxDepth(int)} deep ({@code INVALID_REQUEST});
 *   <li>it is one JSON document ({@code PARSE_ERROR} otherwise), an object with no member name
 *       twice ({@code INVALID_REQUEST}: two parsers must never read two different calls);
 *   <li>{@code id}: a non-empty string of at most {@link #MAX_ID_LENGTH} characters, never a
 *       number, null, object or array;
 *   <li>{@code protocol}: {@code {"name": "vend", "version": "MAJOR.MINOR.PATCH"}};
 *   <li>{@code call}: an object; {@code call.function} in {@code <service>.<action>} dot form
 *       (segments of letters, digits, {@code _} and {@code -}, each starting with a letter or
 *       {@code _}, at most {@link #MAX_FUNCTION_LENGTH} characters); {@code call.version} a string
 *       when present; {@code call.arguments} an object when present;
 *   <li>{@code context}: an object when present; {@code context.caller} a string of 1 to
 *       {@link #MAX_CALLER_LENGTH} printable characters when present;
 *   <li>{@code extensions}: an array of at most {@link #MAX_EXTENSIONS} objects when present, each
 *       with a non-empty {@code urn} string and an optional {@code options} object; for the
 *       rate-limit extension, {@code options.scope} is one of the {@link Scope} names when present.
 * </ul>
 * Members the envelope does not define are ignored (forward compatibility).
 *
 * <p>Thread-safe and immutable.
 */
public final class VendRequestReader {

  /** The default bound on a request body: 1 MiB. */
  public static final int DEFAULT_MAX_BYTES = 1 << 20;

  /** The default bound on nesting depth of a request body. */
  public static final int DEFAULT_MAX_DEPTH = 64;

  /** Longest accepted {@code id}, in characters. */
  public static final int MAX_ID_LENGTH = 256;

  /** Longest accepted {@code call.function}, in characters. */
  public static final int MAX_FUNCTION_LENGTH = 128;

  /** Longest accepted {@code context.caller} (or {@code X-Vend-Caller}), in characters. */
  public static final int MAX_CALLER_LENGTH = 256;

  /** Most entries accepted in {@code extensions}. */
  public static final int MAX_EXTENSIONS = 32;

  private static final Pattern FUNCTION =
      Pattern.compile("[A-Za-z_][A-Za-z0-9_-]*(\\.[A-Za-z_][A-Za-z0-9_-]*)+");
  private static final Pattern VERSION = Pattern.compile("[0-9]{1,9}\\.[0-9]{1,9}\\.[0-9]{1,9}([-+][0-9A-Za-z.+-]{1,64})?");

  private final int maxBytes;
  private final int maxDepth;
  private final ObjectMapper mapper;

  private VendRequestReader(Builder b) {
    this.maxBytes = b.maxBytes;
    this.maxDepth = b.maxDepth;
    this.mapper = VendJson.reader(b.maxDepth);
  }

  /** A reader with the default bounds (1 MiB, depth 64). */
  public static VendRequestReader standard() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The bound on a body, in bytes. */
  public int maxBytes() {
    return maxBytes;
  }

  /** The bound on nesting depth. */
  public int maxDepth() {
    return maxDepth;
  }

  /**
   * Reads a whole request body.
   *
   * @throws VendRequestException when the body is not a valid vend request envelope
   */
  public VendRequest parse(byte[] body) {
    return parse(body, 0, body.length);
  }

  /**
   * Reads a request body held in {@code body[offset, offset + length)}.
   *
   * @throws VendRequestException when the body is not a valid vend request envelope
   */
  public VendRequest parse(byte[] body, int offset, int length) {
    if (length > maxBytes) {
      throw VendRequestException.bodyTooLarge(maxBytes, OptionalLong.of(length));
    }
    JsonNode root;
    try {
      root = mapper.readTree(body, offset, length);
    } catch (StreamConstraintsException e) {
      throw invalid("request: expected JSON nested at most " + maxDepth
          + " levels deep (and strings, numbers within bounds), got " + firstLine(e), null, null);
    } catch (JsonParseException e) {
      if (e.getOriginalMessage() != null && e.getOriginalMessage().startsWith("Duplicate field")) {
        throw invalid("request: expected each member name once per object, got " + firstLine(e), null, null);
      }
      throw new VendRequestException(VendError.PARSE_ERROR,
          "request: expected a JSON document, got invalid JSON (" + firstLine(e) + ")",
          null, RateLimitExtension.DEFAULT_PROTOCOL_VERSION);
    } catch (IOException e) {
      // Trailing content, broken encodings: not one JSON document.
      if (e instanceof JsonProcessingException && String.valueOf(((JsonProcessingException) e).getOriginalMessage())
          .startsWith("Trailing token")) {
        JsonProcessingException j = (JsonProcessingException) e;
        throw new VendRequestException(VendError.PARSE_ERROR, "request: expected one JSON document, got more "
            + "content after it" + (j.getLocation() == null ? "" : " at line " + j.getLocation().getLineNr()
            + ", column " + j.getLocation().getColumnNr()), null, RateLimitExtension.DEFAULT_PROTOCOL_VERSION);
      }
      String what = e instanceof JsonProcessingException ? firstLine((JsonProcessingException) e)
          : VendJson.printable(String.valueOf(e.getMessage()), 120);
      throw new VendRequestException(VendError.PARSE_ERROR,
          "request: expected one JSON document, got invalid JSON (" + what + ")",
          null, RateLimitExtension.DEFAULT_PROTOCOL_VERSION);
    }
    if (root == null || root.isMissingNode()) {
      throw new VendRequestException(VendError.PARSE_ERROR,
          "request: expected a JSON document, got an empty body", null, RateLimitExtension.DEFAULT_PROTOCOL_VERSION);
    }
    return envelope(root);
  }

  /**
   * Reads a request body from a buffer's remaining bytes, without moving its position.
   *
   * @throws VendRequestException when the body is not a valid vend request envelope
   */
  public VendRequest parse(ByteBuffer body) {
    if (body.hasArray()) {
      return parse(body.array(), body.arrayOffset() + body.position(), body.remaining());
    }
    if (body.remaining() > maxBytes) {
      throw VendRequestException.bodyTooLarge(maxBytes, OptionalLong.of(body.remaining()));
    }
    byte[] copy = new byte[body.remaining()];
    body.duplicate().get(copy);
    return parse(copy);
  }

  /**
   * Reads a request body from a stream, reading at most {@link #maxBytes()} + 1 bytes: a longer
   * body is refused without reading the rest. The stream is not closed.
   *
   * @throws VendRequestException when the body is not a valid vend request envelope
   * @throws IOException when the stream fails
   */
  public VendRequest read(InputStream in) throws IOException {
    byte[] bytes = in.readNBytes(maxBytes + 1);
    if (bytes.length > maxBytes) {
      throw VendRequestException.bodyTooLarge(maxBytes, OptionalLong.empty());
    }
    return parse(bytes);
  }

  private VendRequest envelope(JsonNode root) {
    if (!root.isObject()) {
      throw invalid("request: expected a JSON object (a vend request envelope), got " + VendJson.describe(root), null, null);
    }
    // The id first, so that every later error can echo it.
    JsonNode idNode = root.get("id");
    if (idNode == null || !idNode.isTextual() || idNode.textValue().isEmpty()) {
      throw invalid("id: expected a non-empty string, got " + VendJson.describe(idNode), null, versionOrNull(root));
    }
    String id = idNode.textValue();
    if (id.length() > MAX_ID_LENGTH) {
      throw invalid("id: expected at most " + MAX_ID_LENGTH + " characters, got " + id.length()
          + " characters", null, versionOrNull(root));
    }
    // protocol
    JsonNode protocol = root.get("protocol");
    if (protocol == null || !protocol.isObject()) {
      throw invalid("protocol: expected an object {\"name\": \"vend\", \"version\": \"0.1.0\"}, got "
          + VendJson.describe(protocol), id, null);
    }
    JsonNode name = protocol.get("name");
    if (name == null || !name.isTextual() || !RateLimitExtension.PROTOCOL_NAME.equals(name.textValue())) {
      throw invalid("protocol.name: expected \"vend\", got " + VendJson.describe(name), id, null);
    }
    String version = versionOrNull(root);
    if (version == null) {
      throw invalid("protocol.version: expected a version string MAJOR.MINOR.PATCH such as \"0.1.0\", got "
          + VendJson.describe(protocol.get("version")), id, null);
    }
    // call
    JsonNode call = root.get("call");
    if (call == null || !call.isObject()) {
      throw invalid("call: expected an object with a \"function\", got " + VendJson.describe(call), id, version);
    }
    JsonNode fn = call.get("function");
    if (fn == null || !fn.isTextual() || fn.textValue().length() > MAX_FUNCTION_LENGTH
        || !FUNCTION.matcher(fn.textValue()).matches()) {
      throw invalid("call.function: expected a function name in <service>.<action> dot form such as "
          + "\"orders.create\" (at most " + MAX_FUNCTION_LENGTH + " characters), got " + VendJson.describe(fn), id, version);
    }
    JsonNode fnVersion = call.get("version");
    if (fnVersion != null && !fnVersion.isTextual()) {
      throw invalid("call.version: expected a string such as \"1\", got " + VendJson.describe(fnVersion), id, version);
    }
    JsonNode args = call.get("arguments");
    if (args != null && !args.isObject()) {
      throw invalid("call.arguments: expected an object, got " + VendJson.describe(args), id, version);
    }
    // context
    JsonNode context = root.get("context");
    String caller = null;
    if (context != null) {
      if (!context.isObject()) {
        throw invalid("context: expected an object, got " + VendJson.describe(context), id, version);
      }
      JsonNode c = context.get("caller");
      if (c != null) {
        if (!c.isTextual() || !validCaller(c.textValue())) {
          throw invalid("context.caller: expected a string of 1 to " + MAX_CALLER_LENGTH
              + " printable characters naming the calling service, got " + VendJson.describe(c), id, version);
        }
        caller = c.textValue();
      }
    }
    // extensions
    List<VendRequest.Extension> extensions = new ArrayList<>(1);
    Scope requestedScope = null;
    JsonNode ext = root.get("extensions");
    if (ext != null) {
      if (!ext.isArray() || ext.size() > MAX_EXTENSIONS) {
        throw invalid("extensions: expected an array of at most " + MAX_EXTENSIONS
            + " {\"urn\", \"options\"} objects, got " + VendJson.describe(ext), id, version);
      }
      boolean rateLimitSeen = false;
      for (int i = 0; i < ext.size(); i++) {
        String at = "extensions[" + i + "]";
        JsonNode e = ext.get(i);
        if (!e.isObject()) {
          throw invalid(at + ": expected an object {\"urn\", \"options\"}, got " + VendJson.describe(e), id, version);
        }
        JsonNode urn = e.get("urn");
        if (urn == null || !urn.isTextual() || urn.textValue().isEmpty() || urn.textValue().length() > 256) {
          throw invalid(at + ".urn: expected a non-empty string such as \"" + RateLimitExtension.URN
              + "\", got " + VendJson.describe(urn), id, version);
        }
        JsonNode options = e.get("options");
        if (options != null && !options.isObject()) {
          throw invalid(at + ".options: expected an object, got " + VendJson.describe(options), id, version);
        }
        ObjectNode opts = options == null ? VendJson.object() : (ObjectNode) options;
        if (RateLimitExtension.URN.equals(urn.textValue()) && !rateLimitSeen) {
          rateLimitSeen = true;
          JsonNode scope = opts.get("scope");
          if (scope != null) {
            if (!scope.isTextual()) {
              throw invalid(at + ".options.scope: expected one of global, service, function, user, got "
                  + VendJson.describe(scope), id, version);
            }
            try {
              requestedScope = Scope.fromToken(scope.textValue());
            } catch (IllegalArgumentException bad) {
              throw invalid(at + ".options." + bad.getMessage(), id, version);
            }
          }
        }
        extensions.add(new VendRequest.Extension(urn.textValue(), opts));
      }
    }
    return new VendRequest(version, id, fn.textValue(), fnVersion == null ? null : fnVersion.textValue(),
        args == null ? VendJson.object() : (ObjectNode) args,
        context == null ? VendJson.object() : (ObjectNode) context,
        caller, extensions, requestedScope);
  }

  /** Whether the name is a function name in dot form of at most {@link #MAX_FUNCTION_LENGTH}. */
  public static boolean validFunction(String s) {
    return s != null && s.length() <= MAX_FUNCTION_LENGTH && FUNCTION.matcher(s).matches();
  }

  /** A caller name: 1 to {@link #MAX_CALLER_LENGTH} printable characters, no control characters. */
  public static boolean validCaller(String s) {
    if (s == null || s.isEmpty() || s.length() > MAX_CALLER_LENGTH || s.isBlank()) {
      return false;
    }
    for (int i = 0; i < s.length(); i++) {
      if (Character.isISOControl(s.charAt(i))) {
        return false;
      }
    }
    return true;
  }

  private static String versionOrNull(JsonNode root) {
    JsonNode protocol = root.get("protocol");
    if (protocol == null || !protocol.isObject()) {
      return null;
    }
    JsonNode v = protocol.get("version");
    return v != null && v.isTextual() && VERSION.matcher(v.textValue()).matches() ? v.textValue() : null;
  }

  private static VendRequestException invalid(String message, String id, String version) {
    return new VendRequestException(VendError.INVALID_REQUEST, message, id,
        version == null ? RateLimitExtension.DEFAULT_PROTOCOL_VERSION : version);
  }

  private static String firstLine(JsonProcessingException e) {
    String m = String.valueOf(e.getOriginalMessage());
    int nl = m.indexOf('\n');
    int cut = m.indexOf(": was expecting");
    if (cut < 0) {
      cut = m.indexOf(", from `");
    }
    String head = m.substring(0, cut > 0 ? cut : nl < 0 ? m.length() : nl);
    if (m.startsWith(", from `", Math.max(cut, 0))) {
      head += ")";
    }
    String where = e.getLocation() == null ? ""
        : " at line " + e.getLocation().getLineNr() + ", column " + e.getLocation().getColumnNr();
    return VendJson.printable(head, 120) + where;
  }

  /** Builds a {@link VendRequestReader}. */
  public static final class Builder {
    private int maxBytes = DEFAULT_MAX_BYTES;
    private int maxDepth = DEFAULT_MAX_DEPTH;

    private Builder() {}

    /** The largest body accepted, in bytes: 64 to 64 MiB; default {@link #DEFAULT_MAX_BYTES}. */
    public Builder maxBytes(int maxBytes) {
      if (maxBytes < 64 || maxBytes > (64 << 20)) {
        throw new IllegalArgumentException("maxBytes: expected 64 to " + (64 << 20) + " bytes, got " + maxBytes);
      }
      this.maxBytes = maxBytes;
      return this;
    }

    /** The deepest nesting accepted: 4 to 1000; default {@link #DEFAULT_MAX_DEPTH}. */
    public Builder maxDepth(int maxDepth) {
      if (maxDepth < 4 || maxDepth > 1000) {
        throw new IllegalArgumentException("maxDepth: expected 4 to 1000, got " + maxDepth);
      }
      this.maxDepth = maxDepth;
      return this;
    }

    public VendRequestReader build() {
      return new VendRequestReader(this);
    }
  }
}
