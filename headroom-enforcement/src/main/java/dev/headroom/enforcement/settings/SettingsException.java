package dev.headroom.enforcement.settings;

import java.util.List;

/**
 * Settings that cannot be used, with every problem found in them (never only the first), each a
 * {@link SettingsProblem} naming the setting's path, the value and what was expected. The message
 * is the one problem, or a count followed by one problem a line.
 *
 * <p>The bindings of the settings model throw it (or a subclass of their own, such as the Spring
 * Boot starter's, that a failure analyzer recognises).
 */
public class SettingsException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  private final List<SettingsProblem> problems;

  /**
   * @param problems at least one
   * @param cause what a library said about the first problem, or null
   */
  public SettingsException(List<SettingsProblem> problems, Throwable cause) {
    super(render(problems), cause);
    this.problems = List.copyOf(problems);
  }

  public SettingsException(List<SettingsProblem> problems) {
    this(problems, null);
  }

  /** One problem. */
  public SettingsException(String path, Object value, String expected, Throwable cause) {
    this(List.of(SettingsProblem.of(path, value, expected)), cause);
  }

  /** Every problem, in the order found. */
  public List<SettingsProblem> problems() {
    return problems;
  }

  /** The path of the first problem, such as {@code headroom.policies.burst.quota}. */
  public String path() {
    return problems.get(0).path();
  }

  private static String render(List<SettingsProblem> problems) {
    if (problems.isEmpty()) {
      throw new IllegalArgumentException("problems: expected at least one, got none");
    }
    if (problems.size() == 1) {
      return problems.get(0).toString();
    }
    StringBuilder sb = new StringBuilder().append(problems.size()).append(" problems");
    problems.forEach(p -> sb.append("\n  - ").append(p));
    return sb.toString();
  }
}
