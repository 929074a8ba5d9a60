package dev.headroom.gateway;

/**
 * A listener the gateway could not open: the address is in use by another process, say, or the
 * port needs privileges. The message is one line naming the setting ({@code listen} or
 * {@code admin}), the address and the operating system's reason, for example
 * {@code listen: cannot listen on 127.0.0.1:8080: Address already in use}.
 */
public final class ListenException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final String setting;
  private final String host;
  private final int port;

  /** The listener {@code setting} ({@code listen} or {@code admin}) could not bind {@code host:port}. */
  public ListenException(String setting, String host, int port, Throwable cause) {
    super(setting + ": cannot listen on " + address(host, port) + ": " + reason(cause), cause);
    this.setting = setting;
    this.host = host;
    this.port = port;
  }

  /** The configuration section of the listener: {@code listen} or {@code admin}. */
  public String setting() {
    return setting;
  }

  /** The address as {@code host:port} ({@code [v6]:port} for an IPv6 literal). */
  public String address() {
    return address(host, port);
  }

  /** The port asked for. */
  public int port() {
    return port;
  }

  private static String address(String host, int port) {
    return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
  }

  /** The cause's own words, without Netty's prefix ({@code bind(..) failed: }). */
  private static String reason(Throwable cause) {
    String m = cause == null || cause.getMessage() == null ? "unknown reason" : cause.getMessage();
    int colon = m.lastIndexOf("failed: ");
    return colon >= 0 ? m.substring(colon + "failed: ".length()) : m;
  }
}
