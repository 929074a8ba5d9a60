package dev.headroom.enforcement.settings;

import java.util.Objects;

/**
 * One setting that cannot be used: where it is (the path in the binding's own spelling, such as
 * {@code headroom.policies.burst.window} or {@code policies.burst.window}), the value found, and
 * what was expected.
 *
 * @param path the setting, as the binding names it
 * @param value the value found, or null when it was missing
 * @param expected what a usable value is, such as {@code an integer from 1 to 10}
 */
public record SettingsProblem(String path, String value, String expected) {

  public SettingsProblem {
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(expected, "expected");
  }

  /** A problem with a value of any type, shown as {@link String#valueOf(Object)}; null when missing. */
  public static SettingsProblem of(String path, Object value, String expected) {
    return new SettingsProblem(path, value == null ? null : String.valueOf(value), expected);
  }

  /** {@code path: expected EXPECTED, got 'VALUE'} (or {@code got nothing}). */
  @Override
  public String toString() {
    return path + ": expected " + expected + ", got " + (value == null ? "nothing" : "'" + value + "'");
  }
}
