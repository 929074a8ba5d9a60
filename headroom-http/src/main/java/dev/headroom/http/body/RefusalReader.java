package dev.headroom.http.body;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Reads a refusal body (problem+json or Graceful Boundaries JSON) back into a {@link Refusal}, for
 * the client and the conformance checker.
 *
 * <p><b>Lenient</b>: a member of the wrong type is dropped and noted in {@link Refusal#issues()}
 * rather than failing the whole body (draft-09 section 7: malformed fields are ignored); so is a
 * negative or fractional {@code retryAfterSeconds}. {@code windowResetAt} may be an ISO 8601
 * timestamp or Unix seconds. Unknown members are kept as {@link Refusal#extensions()}.
 *
 * <p><b>Bounded</b>: the body size, the nesting depth, string and number lengths, the number of
 * extension members and array elements are all capped, so a hostile body costs bounded memory
 * and time. Duplicate member names make the body unreadable: two values for {@code retryAfterSeconds}
 * are an ambiguity that different readers resolve differently.
 *
 * <p>Immutable and thread-safe.
 */
public final class RefusalReader {

  /** Default {@link Builder#maxBytes(int)}: 64 KiB, far beyond any honest refusal. */
  public static final int DEFAULT_MAX_BYTES = 64 * 1024;

  /** Default {@link Builder#maxDepth(int)}. */
  public static final int DEFAULT_MAX_DEPTH = 16;

  /** Longest string value kept, in characters. */
  public static final int MAX_STRING = 8192;

  /** Most elements read from one array; the rest are dropped. */
  public static final int MAX_ARRAY = 64;

  private static final RefusalReader DEFAULTS = builder().build();

  private final int maxBytes;
  private final int maxDepth;
  private final JsonFactory json;

  private RefusalReader(Builder b) {
    this.maxBytes = b.maxBytes;
    this.maxDepth = b.maxDepth;
    this.json = JsonFactory.builder()
        .streamReadConstraints(StreamReadConstraints.builder()
            .maxNestingDepth(b.maxDepth)
            .maxStringLength(b.maxBytes)
            .maxNumberLength(64)
            .maxDocumentLength(b.maxBytes)
            .maxNameLength(1024)
            .build())
        .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
        .disable(StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION)
        .build();
  }

  /** A reader with the default bounds. */
  public static RefusalReader defaults() {
    return DEFAULTS;
  }

  /** Starts a reader with other bounds. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Reads a body received with the given HTTP status (the status the response carried wins over
   * any {@code status} member, as RFC 9457 section 3.1.2 makes the member advisory).
   *
   * @throws RefusalParseException when the body is not one JSON object within the bounds
   */
  public Refusal read(int httpStatus, byte[] body) {
    Objects.requireNonNull(body, "body");
    if (httpStatus < 100 || httpStatus > 599) {
      throw new IllegalArgumentException("httpStatus: expected 100 to 599, got " + httpStatus);
    }
    if (body.length > maxBytes) {
      throw new RefusalParseException("body: expected at most " + maxBytes + " bytes, got " + body.length);
    }
    try (JsonParser p = json.createParser(body)) {
      return read(httpStatus, p);
    } catch (IOException e) {
      throw new RefusalParseException("body: not a readable JSON object within the bounds (" + maxBytes + " bytes, depth "
          + maxDepth + "): " + firstLine(e.getMessage()), e);
    }
  }

  /**
   * Reads at most {@link Builder#maxBytes(int)} bytes from the stream, then as
   * {@link #read(int, byte[])}. The stream is not closed.
   *
   * @throws RefusalParseException when the body is larger than the bound or unreadable
   * @throws IOException when the stream fails
   */
  public Refusal read(int httpStatus, InputStream body) throws IOException {
    byte[] bytes = body.readNBytes(maxBytes + 1);
    return read(httpStatus, bytes);
  }

  private Refusal read(int httpStatus, JsonParser p) throws IOException {
    if (p.nextToken() != JsonToken.START_OBJECT) {
      throw new RefusalParseException("body: expected a JSON object, got " + describe(p.currentToken()));
    }
    Refusal.Builder b = Refusal.builder(httpStatus);
    List<String> issues = new ArrayList<>();
    int extensions = 0;
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String name = p.currentName();
      JsonToken t = p.nextToken();
      switch (name) {
        case "type": b.type(string(p, name, issues)); break;
        case "title": b.title(string(p, name, issues)); break;
        case "detail": b.detail(string(p, name, issues)); break;
        case "instance": b.instance(string(p, name, issues)); break;
        case "error": b.error(string(p, name, issues)); break;
        case "why": b.why(string(p, name, issues)); break;
        case "limit": b.limit(string(p, name, issues)); break;
        case "limitId": b.limitId(string(p, name, issues)); break;
        case "limitType": b.limitTypeRaw(string(p, name, issues)); break;
        case "scope": b.scope(string(p, name, issues)); break;
        case "cachedResultUrl": b.cachedResultUrl(string(p, name, issues)); break;
        case "alternativeEndpoint": b.alternativeEndpoint(string(p, name, issues)); break;
        case "upgradeUrl": b.upgradeUrl(string(p, name, issues)); break;
        case "humanUrl": b.humanUrl(string(p, name, issues)); break;
        case "field": b.field(string(p, name, issues)); break;
        case "expected": b.expected(string(p, name, issues)); break;
        case "authUrl": b.authUrl(string(p, name, issues)); break;
        case "scanUrl": b.scanUrl(string(p, name, issues)); break;
        case "statusUrl": b.statusUrl(string(p, name, issues)); break;
        case "cached": b.cached(bool(p, name, issues)); break;
        case "scanAvailable": b.scanAvailable(bool(p, name, issues)); break;
        case "violated-policies": b.violatedPolicies(strings(p, name, issues)); break;
        case "allowedMethods": {
          List<String> m = strings(p, name, issues);
          b.allowedMethods(t == JsonToken.START_ARRAY ? m : null);
          break;
        }
        case "retryAfterSeconds": b.retryAfterSecondsRaw(seconds(p, issues)); break;
        case "windowResetAt": b.windowResetAtRaw(instant(p, issues)); break;
        case "status": {
          if (t == JsonToken.VALUE_NUMBER_INT && p.getNumberType() == JsonParser.NumberType.INT
              && p.getIntValue() != httpStatus) {
            issues.add("status: the member says " + p.getIntValue() + " but the response is " + httpStatus);
          } else if (t != JsonToken.VALUE_NUMBER_INT) {
            issues.add("status: expected an integer, got " + describe(t));
            p.skipChildren();
          }
          break;
        }
        default: {
          Object v = value(p, new int[] {0});
          if (extensions < Refusal.MAX_EXTENSIONS) {
            b.putExtension(name, v);
            extensions++;
          } else if (extensions++ == Refusal.MAX_EXTENSIONS) {
            issues.add("extensions: more than " + Refusal.MAX_EXTENSIONS + " members; the rest were dropped");
          }
        }
      }
    }
    if (p.currentToken() != JsonToken.END_OBJECT) {
      throw new RefusalParseException("body: expected the end of the object, got " + describe(p.currentToken()));
    }
    if (p.nextToken() != null) {
      throw new RefusalParseException("body: expected nothing after the object, got " + describe(p.currentToken()));
    }
    return b.buildRead(issues);
  }

  private static String string(JsonParser p, String name, List<String> issues) throws IOException {
    JsonToken t = p.currentToken();
    if (t == JsonToken.VALUE_STRING) {
      String s = p.getText();
      if (s.length() > MAX_STRING) {
        issues.add(name + ": longer than " + MAX_STRING + " characters; dropped");
        return null;
      }
      return s;
    }
    issues.add(name + ": expected a string, got " + describe(t) + "; dropped");
    p.skipChildren();
    return null;
  }

  private static Boolean bool(JsonParser p, String name, List<String> issues) throws IOException {
    JsonToken t = p.currentToken();
    if (t == JsonToken.VALUE_TRUE || t == JsonToken.VALUE_FALSE) {
      return t == JsonToken.VALUE_TRUE;
    }
    issues.add(name + ": expected true or false, got " + describe(t) + "; dropped");
    p.skipChildren();
    return null;
  }

  private static List<String> strings(JsonParser p, String name, List<String> issues) throws IOException {
    JsonToken t = p.currentToken();
    if (t != JsonToken.START_ARRAY) {
      issues.add(name + ": expected an array of strings, got " + describe(t) + "; dropped");
      p.skipChildren();
      return List.of();
    }
    List<String> out = new ArrayList<>();
    boolean dropped = false;
    while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
      if (t == JsonToken.VALUE_STRING && out.size() < MAX_ARRAY && p.getTextLength() <= MAX_STRING) {
        out.add(p.getText());
      } else {
        dropped = true;
        p.skipChildren();
      }
    }
    if (dropped) {
      issues.add(name + ": some elements were not strings or beyond " + MAX_ARRAY + " elements; dropped");
    }
    return out;
  }

  private static Long seconds(JsonParser p, List<String> issues) throws IOException {
    JsonToken t = p.currentToken();
    if (t == JsonToken.VALUE_NUMBER_INT && p.getNumberType() != JsonParser.NumberType.BIG_INTEGER) {
      long v = p.getLongValue();
      if (v >= 0) {
        return v;
      }
      issues.add("retryAfterSeconds: expected a non-negative integer, got " + v + "; dropped");
      return null;
    }
    issues.add("retryAfterSeconds: expected a non-negative integer, got " + describe(t)
        + (t == JsonToken.VALUE_NUMBER_FLOAT || t == JsonToken.VALUE_NUMBER_INT ? " " + p.getText() : "") + "; dropped");
    p.skipChildren();
    return null;
  }

  private static Instant instant(JsonParser p, List<String> issues) throws IOException {
    JsonToken t = p.currentToken();
    try {
      if (t == JsonToken.VALUE_STRING && p.getTextLength() <= 64) {
        String s = p.getText();
        try {
          return Instant.parse(s);
        } catch (DateTimeException e) {
          return OffsetDateTime.parse(s).toInstant();
        }
      }
      if (t == JsonToken.VALUE_NUMBER_INT && p.getNumberType() != JsonParser.NumberType.BIG_INTEGER) {
        return Instant.ofEpochSecond(p.getLongValue());
      }
    } catch (DateTimeException | ArithmeticException e) {
      issues.add("windowResetAt: not an ISO 8601 timestamp or Unix seconds in range; dropped");
      return null;
    }
    issues.add("windowResetAt: expected an ISO 8601 timestamp or Unix seconds, got " + describe(t) + "; dropped");
    p.skipChildren();
    return null;
  }

  /** Any JSON value as plain Java values; bounded by the parser's depth and our element caps. */
  private static Object value(JsonParser p, int[] budget) throws IOException {
    JsonToken t = p.currentToken();
    budget[0]++;
    switch (t) {
      case VALUE_STRING:
        return p.getTextLength() <= MAX_STRING ? p.getText() : p.getText().substring(0, MAX_STRING);
      case VALUE_TRUE:
        return Boolean.TRUE;
      case VALUE_FALSE:
        return Boolean.FALSE;
      case VALUE_NULL:
        return null;
      case VALUE_NUMBER_INT:
        return p.getNumberType() == JsonParser.NumberType.BIG_INTEGER ? (Object) p.getBigIntegerValue()
            : (Object) p.getLongValue();
      case VALUE_NUMBER_FLOAT: {
        double d = p.getDoubleValue();
        return Double.isFinite(d) && BigDecimal.valueOf(d).compareTo(p.getDecimalValue()) == 0 ? (Object) d
            : (Object) p.getDecimalValue();
      }
      case START_ARRAY: {
        List<Object> out = new ArrayList<>();
        while (p.nextToken() != JsonToken.END_ARRAY) {
          Object v = value(p, budget);
          if (out.size() < MAX_ARRAY && budget[0] < 1024) {
            out.add(v);
          }
        }
        return Collections.unmodifiableList(out);
      }
      case START_OBJECT: {
        Map<String, Object> out = new LinkedHashMap<>();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
          String name = p.currentName();
          p.nextToken();
          Object v = value(p, budget);
          if (out.size() < MAX_ARRAY && budget[0] < 1024) {
            out.put(name, v);
          }
        }
        return Collections.unmodifiableMap(out);
      }
      default:
        throw new RefusalParseException("body: unexpected " + describe(t));
    }
  }

  private static String describe(JsonToken t) {
    if (t == null) {
      return "the end of the input";
    }
    switch (t) {
      case START_OBJECT: return "an object";
      case START_ARRAY: return "an array";
      case VALUE_STRING: return "a string";
      case VALUE_NUMBER_INT: return "an integer";
      case VALUE_NUMBER_FLOAT: return "a fractional number";
      case VALUE_TRUE:
      case VALUE_FALSE: return "a boolean";
      case VALUE_NULL: return "null";
      default: return t.toString().toLowerCase(Locale.ROOT);
    }
  }

  private static String firstLine(String s) {
    if (s == null) {
      return "unreadable";
    }
    int nl = s.indexOf('\n');
    String line = nl < 0 ? s : s.substring(0, nl);
    return line.length() > 200 ? line.substring(0, 200) : line;
  }

  /** Builds a {@link RefusalReader}. */
  public static final class Builder {
    private int maxBytes = DEFAULT_MAX_BYTES;
    private int maxDepth = DEFAULT_MAX_DEPTH;

    private Builder() {}

    /** Largest body read, 256 bytes to 1 MiB; defaults to {@value #DEFAULT_MAX_BYTES}. */
    public Builder maxBytes(int maxBytes) {
      if (maxBytes < 256 || maxBytes > 1 << 20) {
        throw new IllegalArgumentException("maxBytes: expected 256 to 1048576, got " + maxBytes);
      }
      this.maxBytes = maxBytes;
      return this;
    }

    /** Deepest nesting read, 2 to 64; defaults to {@value #DEFAULT_MAX_DEPTH}. */
    public Builder maxDepth(int maxDepth) {
      if (maxDepth < 2 || maxDepth > 64) {
        throw new IllegalArgumentException("maxDepth: expected 2 to 64, got " + maxDepth);
      }
      this.maxDepth = maxDepth;
      return this;
    }

    /** The reader. */
    public RefusalReader build() {
      return new RefusalReader(this);
    }
  }
}
