package dev.headroom.gateway;

import java.util.List;

/**
 * A configuration that cannot be used, with every problem found in it. Each problem names the YAML
 * path, the value found and what is expected, for example
 * {@code policies.daily.window: "1 day" is not a duration; expected a whole number of seconds or
 * a value such as 30s, 5m, 1h, 1d}. The message is {@code SOURCE: PROBLEM} for one problem, else
 * a count followed by one problem a line.
 */
public final class ConfigException extends Exception {
  private static final long serialVersionUID = 1L;

  private final String source;
  private final List<String> problems;

  /** A configuration from {@code source} (a file name) with the given problems, at least one. */
  public ConfigException(String source, List<String> problems) {
    super(render(source, problems));
    if (problems.isEmpty()) {
      throw new IllegalArgumentException("a ConfigException needs at least one problem");
    }
    this.source = source;
    this.problems = List.copyOf(problems);
  }

  /** Where the configuration came from. */
  public String source() {
    return source;
  }

  /** Every problem, one line each, in the order of the file. */
  public List<String> problems() {
    return problems;
  }

  private static String render(String source, List<String> problems) {
    if (problems.size() == 1) { // one line, such as "config.yaml: the file is ... bytes; expected ..."
      return source + ": " + problems.get(0);
    }
    StringBuilder sb = new StringBuilder();
    sb.append(source).append(": ").append(problems.size())
        .append(problems.size() == 1 ? " problem" : " problems");
    for (String p : problems) {
      sb.append("\n  - ").append(p);
    }
    return sb.toString();
  }
}
