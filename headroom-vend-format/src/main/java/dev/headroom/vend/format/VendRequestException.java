package dev.headroom.vend.format;

import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

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

  /**
   * A refusal of a request found invalid after its envelope was read, such as the enforcement's
   * check of a caller header (headroom-vend).
   *
   * @param code {@link VendError#PARSE_ERROR} or {@link VendError#INVALID_REQUEST}
   * @param message names the field, the value and what was expected
   * @param id the request's id, or null when it could not be read
   * @param protocolVersion the protocol version to answer with
   */
  public VendRequestException(String code, String message, String id, String protocolVersion) {
    super(message);
    this.error = VendError.of(code, message, false);
    this.id = id;
    this.protocolVersion = Objects.requireNonNull(protocolVersion);
  }

  /**
   * A request body over the bound a server reads ({@code INVALID_REQUEST}, 400, id {@code null}:
   * the envelope was not read), exactly as {@link VendRequestReader} refuses one. For transports
   * that meet the bound before a reader does, such as a proxy counting a body as it arrives, so
   * that they answer the same envelope.
   *
   * @param maxBytes the bound, in bytes
   * @param length the body's length when known (declared, or read whole); empty when only known
   *     to be longer than the bound
   */
  public static VendRequestException bodyTooLarge(long maxBytes, OptionalLong length) {
    Objects.requireNonNull(length, "length");
    return new VendRequestException(VendError.INVALID_REQUEST, "request: expected a body of at most " + maxBytes
        + " bytes, got " + (length.isPresent() ? length.getAsLong() + " bytes" : "more"), null,
        RateLimitExtension.DEFAULT_PROTOCOL_VERSION);
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
