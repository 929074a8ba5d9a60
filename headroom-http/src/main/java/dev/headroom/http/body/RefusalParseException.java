package dev.headroom.http.body;

/**
 * A body that cannot be read as a refusal at all: not a JSON object, not valid JSON, or beyond
 * the reader's bounds. The message says which, without echoing the body.
 */
public final class RefusalParseException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  RefusalParseException(String message) {
    super(message);
  }

  RefusalParseException(String message, Throwable cause) {
    super(message, cause);
  }
}
