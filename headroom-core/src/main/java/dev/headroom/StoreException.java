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

  /**
   * Whether the store did not ask its backend because this process is overloaded (too many
   * decisions outstanding, its own queue full): the backend may be healthy, so a front end answers
   * with a shorter wait (RFC 9110 section 15.6.4). False here; a store's overload exception says true.
   */
  public boolean overloaded() {
    return false;
  }
}
