package dev.headroom;

/**
 * A {@link Store} could not decide: a remote store was unreachable, too slow, or answered
 * something it should not have. The caller's failure policy (fail open, fail closed, fall back)
 * decides what happens next.
 */
public class StoreException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public StoreException(String message) {
    super(message);
  }

  public StoreException(String message, Throwable cause) {
    super(message, cause);
  }
}
