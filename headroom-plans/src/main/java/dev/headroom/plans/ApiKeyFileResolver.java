package dev.headroom.plans;

import dev.headroom.enforcement.partition.ApiKeys;
import dev.headroom.enforcement.partition.RequestView;
import dev.headroom.enforcement.plan.PlanResolution;
import dev.headroom.enforcement.plan.PlanResolver;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Plans by API key from a file of SHA-256 hashes, one key a line: {@code <sha256-hex> <plan>}
 * (blank lines and lines starting with {@code #} are ignored). Keys are never in the file, only
 * their hashes ({@link ApiKeys#sha256}); the request's key is read from one header
 * ({@code X-Api-Key} by default), hashed, and looked up. A key not in the file, or no key, is
 * {@link PlanResolution#anonymous() anonymous}: the fallback plan.
 *
 * <p>{@link #reload()} reads the file again and swaps the table in one volatile write; a file that
 * does not read (a bad line, a hash twice, too large, empty: a file being rewritten in place is
 * empty for a moment) keeps the table in force and says why. The
 * gateway calls it when its file watcher sees the file change. Answers are immediate (a map lookup);
 * thread-safe.
 */
public final class ApiKeyFileResolver implements PlanResolver {
  /** Largest key file read: a million keys at about 80 bytes a line. */
  public static final long MAX_FILE_BYTES = 100L * 1024 * 1024;

  private final Path file;
  private final String header;
  private volatile Map<String, String> plans;

  private ApiKeyFileResolver(Path file, String header, Map<String, String> plans) {
    this.file = file;
    this.header = header;
    this.plans = plans;
  }

  /**
   * Reads the file now.
   *
   * @param file the key file
   * @param header the request header carrying the key, such as {@code X-Api-Key}
   * @throws IllegalArgumentException naming the file, the line and what was expected
   */
  public static ApiKeyFileResolver of(Path file, String header) {
    Objects.requireNonNull(header, "header");
    return new ApiKeyFileResolver(file, header, read(file));
  }

  /** The key file. */
  public Path file() {
    return file;
  }

  /** How many keys the table in force holds. */
  public int size() {
    return plans.size();
  }

  /**
   * Reads the file again; on success the new table applies to the next request.
   *
   * @throws IllegalArgumentException when the file does not read; the table in force is kept
   */
  public void reload() {
    try {
      if (Files.size(file) == 0) {
        // a file rewritten in place is empty for a moment: never take that for "no keys"
        throw new IllegalArgumentException(file + ": is empty; expected '<sha256-hex> <plan>' lines "
            + "(to remove every key, leave a comment line)");
      }
    } catch (IOException e) {
      throw new IllegalArgumentException(file + ": cannot be read (" + e + ")", e);
    }
    plans = read(file);
  }

  @Override
  public CompletionStage<PlanResolution> resolve(RequestView request) {
    return CompletableFuture.completedFuture(ApiKeys.presented(request, header)
        .map(plans::get)
        .<PlanResolution>map(PlanResolution.Named::new)
        .orElse(PlanResolution.anonymous()));
  }

  /** Parses the key file into hash to plan name; every problem names its line. */
  static Map<String, String> read(Path file) {
    String text;
    try {
      long size = Files.size(file);
      if (size > MAX_FILE_BYTES) {
        throw new IllegalArgumentException(file + ": " + size + " bytes; expected at most " + MAX_FILE_BYTES);
      }
      text = Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalArgumentException(file + ": cannot be read (" + e + "); expected a key file of "
          + "'<sha256-hex> <plan>' lines", e);
    }
    Map<String, String> out = new HashMap<>();
    List<String> problems = new ArrayList<>();
    String[] lines = text.split("\r?\n", -1);
    for (int i = 0; i < lines.length; i++) {
      String line = lines[i].strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      String where = file + " line " + (i + 1) + ": ";
      String[] parts = line.split("[ \t]+");
      if (parts.length != 2 || !ApiKeys.isSha256Hex(parts[0])) {
        // never quoted: a line that is not a hash may be a key in clear
        problems.add(where + parts.length + " word(s), the first of " + parts[0].length()
            + " characters, is not valid; expected '<sha256-hex of the key> <plan>' (64 hex digits, a space, a plan name)");
        continue;
      }
      if (out.put(parts[0].toLowerCase(Locale.ROOT), parts[1]) != null) {
        problems.add(where + "hash " + parts[0].substring(0, 12) + "... appears twice; expected each key once");
      }
    }
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(String.join("; ", problems.subList(0, Math.min(10, problems.size())))
          + (problems.size() > 10 ? "; and " + (problems.size() - 10) + " more" : ""));
    }
    return Map.copyOf(out);
  }
}
