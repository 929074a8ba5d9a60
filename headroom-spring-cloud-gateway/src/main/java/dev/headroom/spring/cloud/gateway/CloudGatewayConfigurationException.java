package dev.headroom.spring.cloud.gateway;

/**
 * A Headroom setting of a Spring Cloud Gateway application that cannot be used: names the setting
 * (a {@code headroom.cloud-gateway.*} property or a route's filter argument), the value and what
 * is expected.
 */
public class CloudGatewayConfigurationException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  private final String setting;

  public CloudGatewayConfigurationException(String setting, Object value, String expected) {
    this(setting, value, expected, null);
  }

  public CloudGatewayConfigurationException(String setting, Object value, String expected, Throwable cause) {
    super(setting + ": expected " + expected + ", got " + (value == null ? "nothing" : "'" + value + "'"), cause);
    this.setting = setting;
  }

  /** The property or filter argument at fault. */
  public String setting() {
    return setting;
  }
}
