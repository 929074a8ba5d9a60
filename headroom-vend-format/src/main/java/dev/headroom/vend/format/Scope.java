package dev.headroom.vend.format;

import java.util.Locale;

/**
 * The rate-limit scopes of seed 003 ("Rate Limit Scopes"), each counted in its own partition.
 *
 * <ul>
 *   <li>{@link #GLOBAL}: one partition for every caller (system protection);
 *   <li>{@link #SERVICE}: one per calling service, {@code context.caller} (or the
 *       {@code X-Vend-Caller} header when the envelope names no caller);
 *   <li>{@link #FUNCTION}: one per function, {@code call.function}, across all callers;
 *   <li>{@link #USER}: one per authenticated user, as the host application supplies it.
 * </ul>
 *
 * <p>The declaration order is the order of the {@code scopes} object and of error reporting.
 */
public enum Scope {
  GLOBAL,
  SERVICE,
  FUNCTION,
  USER;

  /** The scope's name on the wire: {@code global}, {@code service}, {@code function}, {@code user}. */
  public String token() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * The scope with the given wire name.
   *
   * @throws IllegalArgumentException naming the value and the accepted names
   */
  public static Scope fromToken(String token) {
    for (Scope s : values()) {
      if (s.token().equals(token)) {
        return s;
      }
    }
    throw new IllegalArgumentException("scope: expected global, service, function or user, got "
        + (token == null ? "null" : "\"" + VendJson.printable(token) + "\""));
  }
}
