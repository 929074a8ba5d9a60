package dev.headroom.gateway.internal.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import dev.headroom.enforcement.settings.SettingsProblem;
import dev.headroom.http.IoFailure;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What every section reader of {@link ConfigReader} shares: the one list of problems the whole read
 * adds to (so that a bad file is reported with every problem at once), and typed reads of a YAML
 * node that, instead of throwing, add a problem naming the node's YAML path, the value found and
 * what is expected ({@code path: "x" is not valid; expected ...}).
 *
 * <p>Not thread-safe; the readers of one read share one list.
 */
abstract class SectionReader {
  private static final Pattern SHORT_DURATION = Pattern.compile("(\\d{1,9})(ms|s|m|h|d)");

  /** The problems of the whole read, in the order found; every section reader of one read adds to it. */
  final List<String> problems;

  /**
   * The folder of the configuration file, which a relative file path in it is resolved against;
   * null when the configuration is text without a file (then against the working directory).
   */
  private final Path folder;

  SectionReader(List<String> problems) {
    this(problems, null);
  }

  SectionReader(List<String> problems, Path folder) {
    this.problems = problems;
    this.folder = folder;
  }

  /**
   * A file path the configuration names: an absolute one as it is, a relative one resolved against
   * the configuration file's folder, so that the gateway finds its files whatever directory it was
   * started from.
   *
   * @throws java.nio.file.InvalidPathException (an IllegalArgumentException) when it is no path
   */
  final Path file(String name) {
    Path p = Path.of(name);
    return folder == null || p.isAbsolute() ? p : folder.resolve(p).normalize();
  }

  final void check(String path, Runnable r) {
    try {
      r.run();
    } catch (IllegalArgumentException e) {
      libraryProblem(path, e.getMessage());
    }
  }

  /**
   * Adds a message another module wrote about the value at {@code path}, without the field name
   * it starts with when that is the field {@code path} already names (its last key, or one of
   * {@code aliases}, the module's own name for it): {@code policies.a.partition: expected ...},
   * never {@code policies.a.partition: partitioning: expected ...}.
   */
  final void libraryProblem(String path, String message, String... aliases) {
    problems.add(path + ": " + withoutPrefix(path, message, aliases));
  }

  static String withoutPrefix(String path, String message, String... aliases) {
    String last = path.substring(path.lastIndexOf('.') + 1);
    int bracket = last.indexOf('[');
    if (bracket >= 0) {
      last = last.substring(0, bracket);
    }
    if (message.startsWith(last + ": ")) {
      return message.substring(last.length() + 2);
    }
    for (String a : aliases) {
      if (message.startsWith(a + ": ")) {
        return message.substring(a.length() + 2);
      }
    }
    return message;
  }

  final boolean object(String path, JsonNode n) {
    if (!n.isObject()) {
      problem(path, n, "a mapping");
      return false;
    }
    return true;
  }

  final void keys(String path, JsonNode n, String... allowed) {
    Set<String> set = Set.of(allowed);
    for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
      String k = it.next();
      if (!set.contains(k)) {
        problems.add((path.isEmpty() ? k : path + "." + k) + ": unknown key; expected one of "
            + Arrays.toString(allowed));
      }
    }
  }

  final String requiredText(String path, JsonNode n, String expected) {
    if (!n.isTextual() || n.asText().isBlank()) {
      problem(path, n, expected);
      return null;
    }
    return n.asText();
  }

  final Optional<String> optionalText(String path, JsonNode n) {
    if (n.isMissingNode()) {
      return Optional.empty();
    }
    if (!n.isTextual()) {
      problem(path, n, "a string");
      return Optional.empty();
    }
    return Optional.of(n.asText());
  }

  /** Guidance URLs are relative paths or absolute http(s) URLs (Graceful Boundaries SC-6). */
  final Optional<String> optionalUrl(String path, JsonNode n) {
    Optional<String> text = optionalText(path, n);
    if (text.isEmpty()) {
      return text;
    }
    String v = text.get();
    boolean ok;
    try {
      URI uri = new URI(v);
      ok = (uri.getScheme() == null && v.startsWith("/"))
          || (("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) && uri.getHost() != null);
    } catch (URISyntaxException e) {
      ok = false;
    }
    if (!ok) {
      problem(path, n, "a relative path starting with / or an http(s) URL");
      return Optional.empty();
    }
    return text;
  }

  final long integer(String path, JsonNode n, long dflt, long min, long max) {
    if (n.isMissingNode()) {
      return dflt;
    }
    if (!n.isIntegralNumber() || !n.canConvertToLong() || n.asLong() < min || n.asLong() > max) {
      problem(path, n, "an integer from " + min + " to " + max);
      return dflt;
    }
    return n.asLong();
  }

  final boolean bool(String path, JsonNode n, boolean dflt) {
    if (n.isMissingNode()) {
      return dflt;
    }
    if (!n.isBoolean()) {
      problem(path, n, "true or false");
      return dflt;
    }
    return n.asBoolean();
  }

  final Duration duration(String path, JsonNode n, Duration dflt) {
    if (n.isMissingNode()) {
      return dflt;
    }
    Optional<Duration> d = parseDuration(n);
    if (d.isEmpty()) {
      problem(path, n, "a duration: whole seconds (60) or a value such as 500ms, 30s, 5m, 1h, 1d or PT1H");
      return dflt;
    }
    return d.get();
  }

  /** Parses whole seconds, {@code 500ms}/{@code 30s}/{@code 5m}/{@code 1h}/{@code 1d}, or ISO-8601. */
  static Optional<Duration> parseDuration(JsonNode n) {
    if (n.isIntegralNumber() && n.canConvertToLong() && n.asLong() > 0) {
      return Optional.of(Duration.ofSeconds(n.asLong()));
    }
    if (!n.isTextual()) {
      return Optional.empty();
    }
    String v = n.asText().trim();
    Matcher m = SHORT_DURATION.matcher(v);
    if (m.matches()) {
      long amount = Long.parseLong(m.group(1));
      if (amount <= 0) {
        return Optional.empty();
      }
      return Optional.of(switch (m.group(2)) {
        case "ms" -> Duration.ofMillis(amount);
        case "s" -> Duration.ofSeconds(amount);
        case "m" -> Duration.ofMinutes(amount);
        case "h" -> Duration.ofHours(amount);
        default -> Duration.ofDays(amount);
      });
    }
    try {
      Duration d = Duration.parse(v.toUpperCase(Locale.ROOT));
      return d.isNegative() || d.isZero() ? Optional.empty() : Optional.of(d);
    } catch (DateTimeParseException e) {
      return Optional.empty();
    }
  }

  /**
   * A secret named in the file but never written in it: the value of the environment variable
   * {@code envName} ({@code envPath} in messages) or the stripped text of the file {@code fileName}
   * ({@code filePath}), read once, here. Messages name the variable or the file, never the secret.
   * Empty, with a problem added, when the one named cannot be read; empty without one when neither
   * is named.
   *
   * @param expected what the variable or the file must hold, for messages
   */
  final Optional<String> secret(String envPath, Optional<String> envName, String filePath, Optional<String> fileName,
      Function<String, String> env, String expected) {
    if (envName.isPresent()) {
      String v = env.apply(envName.get());
      if (v == null || v.isBlank()) {
        problems.add(envPath + ": the environment variable " + envName.get() + " is not set; expected " + expected
            + " in it");
        return Optional.empty();
      }
      return Optional.of(v.strip());
    }
    if (fileName.isPresent()) {
      String shown = fileName.get();
      try {
        Path f = file(fileName.get());
        shown = f.toString();
        return Optional.of(Files.readString(f, StandardCharsets.UTF_8).strip());
      } catch (NoSuchFileException e) {
        problems.add(filePath + ": \"" + shown + "\" does not exist; expected a file holding " + expected);
      } catch (AccessDeniedException e) {
        problems.add(filePath + ": \"" + shown + "\" cannot be read (permission denied); expected a "
            + "readable file holding " + expected);
      } catch (IOException | RuntimeException e) {
        problems.add(filePath + ": \"" + shown + "\" cannot be read (" + IoFailure.inWords(e)
            + "); expected a readable file holding " + expected);
      }
    }
    return Optional.empty();
  }

  /**
   * Adds the problems the settings model (headroom-http's {@code SettingsReader}) found in what
   * this read gave it, except where the YAML itself could not be read: a key with a problem since
   * {@code before} has it already.
   */
  final void addModelProblems(List<SettingsProblem> found, int before) {
    List<String> read = List.copyOf(problems.subList(before, problems.size()));
    for (SettingsProblem p : found) {
      if (read.stream().noneMatch(r -> r.startsWith(p.path() + ":"))) {
        problems.add(inWords(p));
      }
    }
  }

  /** A problem of the settings model (headroom-http's {@link SettingsProblem}) in this reader's words. */
  static String inWords(SettingsProblem p) {
    return p.path() + ": " + (p.value() == null ? "missing" : "\"" + p.value() + "\" is not valid") + "; expected "
        + p.expected();
  }

  final void problem(String path, JsonNode value, String expected) {
    problems.add(path + ": " + describe(value) + "; expected " + expected);
  }

  private static String describe(JsonNode n) {
    if (n == null || n instanceof MissingNode || n.isMissingNode()) {
      return "missing";
    }
    if (n.isNull()) {
      return "null";
    }
    if (n.isTextual()) {
      String t = n.asText();
      return "\"" + (t.length() > 80 ? t.substring(0, 77) + "..." : t) + "\" is not valid";
    }
    if (n.isObject()) {
      return "a mapping is not valid";
    }
    if (n.isArray()) {
      return "a list is not valid";
    }
    return n.toString() + " is not valid";
  }
}
