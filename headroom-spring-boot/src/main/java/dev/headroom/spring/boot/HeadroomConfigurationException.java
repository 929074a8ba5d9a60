package dev.headroom.spring.boot;

/**
 * A {@code headroom.*} property (or a {@link RateLimited} annotation) that cannot be used: the
 * message names the property, the value and what is expected. Stops application startup; the
 * failure analyzer prints it as the reason.
 */
public class HeadroomConfigurationException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final String property;
  private final String value;

  public HeadroomConfigurationException(String property, Object value, String expected, Throwable cause) {
    super(property + ": expected " + expected + ", got " + (value == null ? "nothing" : "'" + value + "'"), cause);
    this.property = property;
    this.value = value == null ? null : String.valueOf(value);
  }

  public HeadroomConfigurationException(String property, Object value, String expected) {
    this(property, value, expected, null);
  }

  /** The property (or annotation) at fault, such as {@code headroom.policies.burst.quota}. */
  public String property() {
    return property;
  }

  /** The offending value, or null when it was missing. */
  public String value() {
    return value;
  }
}
