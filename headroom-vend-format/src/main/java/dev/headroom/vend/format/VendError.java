package dev.headroom.vend.format;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Objects;
import java.util.Optional;

/**
 * One vend error object: {@code code}, {@code message}, {@code retryable} and optional
 * {@code details} (vend-notes.md, "Envelope"). Immutable; {@link #details()} returns a copy.
 */
public final class VendError {

  /** The body is not JSON. HTTP 400. */
  public static final String PARSE_ERROR = "PARSE_ERROR";

  /** The body is JSON but not a valid vend request envelope. HTTP 400. */
  public static final String INVALID_REQUEST = "INVALID_REQUEST";

  /** A rate limit refused the call (seed 003, "Rate Limit Exceeded"). HTTP 429. */
  public static final String RATE_LIMITED = "RATE_LIMITED";

  private final String code;
  private final String message;
  private final boolean retryable;
  private final ObjectNode details;

  private VendError(String code, String message, boolean retryable, ObjectNode details) {
    this.code = Objects.requireNonNull(code, "code");
    this.message = Objects.requireNonNull(message, "message");
    this.retryable = retryable;
    this.details = details;
  }

  /** An error without details. */
  public static VendError of(String code, String message, boolean retryable) {
    return new VendError(code, message, retryable, null);
  }

  /** An error with details (copied). */
  public static VendError of(String code, String message, boolean retryable, ObjectNode details) {
    return new VendError(code, message, retryable, details == null ? null : details.deepCopy());
  }

  public String code() {
    return code;
  }

  public String message() {
    return message;
  }

  public boolean retryable() {
    return retryable;
  }

  /** A copy of the details object, if any. */
  public Optional<ObjectNode> details() {
    return Optional.ofNullable(details).map(ObjectNode::deepCopy);
  }

  /**
   * The HTTP status of this error's code, as the vend HTTP transport maps it (vend-notes.md,
   * "HTTP transport"); 500 for a code it does not list.
   */
  public int httpStatus() {
    return httpStatus(code);
  }

  /** The HTTP status for a vend error code; 500 for a code the transport does not list. */
  public static int httpStatus(String code) {
    switch (code) {
      case PARSE_ERROR:
      case INVALID_REQUEST:
      case "INVALID_ARGUMENTS":
        return 400;
      case "UNAUTHORIZED":
        return 401;
      case "FORBIDDEN":
        return 403;
      case "NOT_FOUND":
      case "FUNCTION_NOT_FOUND":
        return 404;
      case RATE_LIMITED:
        return 429;
      case "DEPENDENCY_ERROR":
        return 502;
      case "UNAVAILABLE":
      case "SERVER_MAINTENANCE":
      case "FUNCTION_MAINTENANCE":
        return 503;
      default:
        return 500;
    }
  }

  /** The error object: {@code {"code", "message", "retryable", "details"?}}. */
  public ObjectNode toJson() {
    ObjectNode o = VendJson.object();
    o.put("code", code);
    o.put("message", message);
    o.put("retryable", retryable);
    if (details != null) {
      o.set("details", details.deepCopy());
    }
    return o;
  }

  @Override
  public String toString() {
    return code + ": " + message;
  }
}
