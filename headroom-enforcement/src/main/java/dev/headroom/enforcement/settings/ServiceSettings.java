package dev.headroom.enforcement.settings;

/** The service, as the limits discovery document names it (Graceful Boundaries section 1). */
public class ServiceSettings {

  /** The service name. */
  private String name;

  /** What the service does. */
  private String description;

  /**
   * The service's origin, such as https://api.example.com: guidance URLs may then be absolute on
   * it as well as relative (Graceful Boundaries SC-6).
   */
  private String origin;

  public ServiceSettings() {}

  /** With the binding's defaults of the name and the description. */
  public ServiceSettings(String name, String description) {
    this.name = name;
    this.description = description;
  }

  public String getName() {
    return name;
  }

  public void setName(String name) {
    this.name = name;
  }

  public String getDescription() {
    return description;
  }

  public void setDescription(String description) {
    this.description = description;
  }

  public String getOrigin() {
    return origin;
  }

  public void setOrigin(String origin) {
    this.origin = origin;
  }
}
