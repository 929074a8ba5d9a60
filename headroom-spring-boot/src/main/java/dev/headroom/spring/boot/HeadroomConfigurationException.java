package dev.headroom.spring.boot;

import dev.headroom.enforcement.settings.SettingsException;
import dev.headroom.enforcement.settings.SettingsProblem;
import java.util.List;

/**
 * {@code headroom.*} properties (or a {@link RateLimited} annotation) that cannot be used: every
 * problem found, each naming the property, the value and what is expected (headroom-http's
 * {@link SettingsException}, which every binding of the settings model throws). Stops application
 * startup; the failure analyzer prints it as the reason.
 */
public class HeadroomConfigurationException extends SettingsException {
  private static final long serialVersionUID = 1L;

  /** Every problem, at least one, and what a library said about the first (or null). */
  public HeadroomConfigurationException(List<SettingsProblem> problems, Throwable cause) {
    super(problems, cause);
  }

  public HeadroomConfigurationException(String property, Object value, String expected, Throwable cause) {
    super(property, value, expected, cause);
  }

  public HeadroomConfigurationException(String property, Object value, String expected) {
    this(property, value, expected, null);
  }

  /** The (first) property or annotation at fault, such as {@code headroom.policies.burst.quota}. */
  public String property() {
    return path();
  }

  /** The (first) offending value, or null when it was missing. */
  public String value() {
    return problems().get(0).value();
  }
}
