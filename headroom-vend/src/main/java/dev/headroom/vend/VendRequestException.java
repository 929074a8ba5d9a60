package dev.headroom.vend;

import java.util.Objects;
import java.util.Optional;

/**
 * A request that is not a valid vend call: {@link VendError#PARSE_ERROR} when the body is not
 * JSON, {@link VendError#INVALID_REQUEST} when it is JSON but not a valid envelope (or exceeds the
 * configured size or depth). The message names the field, the value and what was expected.
 *
 * <p>{@link #responseBody()} is the vend error response to send, with {@link #httpStatus()} (400);
 * it echoes the request's {@code id} when the id itself could be read, and {@code null} otherwise.
 */
public final class VendRequestException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final transient VendError error;
  private final String id;
  private final String protocolVersion;

  VendRequestException(String code, String message, String id, String protocolVersion) {
    super(message);
    this.error = VendError.of(code, message, false);
    this.id = id;
    this.protocolVersion = Objects.requireNonNull(protocolVersion);
  }

  /** The error: code {@code PARSE_ERROR} or {@code INVALID_REQUEST}, not retryable. */
  public VendError error() {
    return error;
  }

  /** The request's id, when it could be read. */
  public Optional<String> id() {
    return Optional.ofNullable(id);
  }

  /** The HTTP status to answer with: 400. */
  public int httpStatus() {
    return error.httpStatus();
  }

  /** The vend error response envelope, UTF-8 JSON. */
  public byte[] responseBody() {
    return VendResponses.error(protocolVersion, id, error, null);
  }
}
