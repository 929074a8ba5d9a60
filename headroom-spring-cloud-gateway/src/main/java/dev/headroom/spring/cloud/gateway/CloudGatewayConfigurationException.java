package dev.headroom.spring.cloud.gateway;

import dev.headroom.enforcement.settings.SettingsException;
import dev.headroom.enforcement.settings.SettingsProblem;
import java.util.List;

/**
 * Headroom settings of a Spring Cloud Gateway application that cannot be used: every problem
 * found, each naming the setting (a {@code headroom.cloud-gateway.*} property or a route's filter
 * argument), the value and what is expected (headroom-http's {@link SettingsException}, which every
 * binding of the settings model throws).
 */
public class CloudGatewayConfigurationException extends SettingsException {
  private static final long serialVersionUID = 1L;

  /** Every problem, at least one, and what a library said about the first (or null). */
  public CloudGatewayConfigurationException(List<SettingsProblem> problems, Throwable cause) {
    super(problems, cause);
  }

  public CloudGatewayConfigurationException(String setting, Object value, String expected) {
    this(setting, value, expected, null);
  }

  public CloudGatewayConfigurationException(String setting, Object value, String expected, Throwable cause) {
    super(setting, value, expected, cause);
  }

  /** The (first) property or filter argument at fault. */
  public String setting() {
    return path();
  }
}
