package dev.headroom.gateway.internal.config;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.MissingNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import dev.headroom.gateway.ConfigException;
import dev.headroom.http.IoFailure;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CoderResult;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.error.MarkedYAMLException;

/**
 * Reads the configuration's bytes and YAML within bounds, before {@link ConfigReader} looks at
 * what they mean.
 *
 * <p>How and why: SnakeYAML's scanner copies its read-ahead window for every 1 KiB of a token, so
 * one long line (a comment, a scalar) costs time quadratic in its length: a 4 MiB comment took
 * 10 s, a 16 MiB one over 30 s at full CPU. The file's size is therefore bounded before any
 * parsing: its size on disk is compared first, and the read itself stops one byte past the bound,
 * so a huge or growing file is refused after reading at most {@code maxBytes + 1} bytes. Then the
 * YAML is walked as Jackson's event stream (the same events {@code readTree} sees) into a tree,
 * refusing on the way what the configuration has no use for and a tree cannot show:
 * <ul>
 *   <li>a key twice in one mapping: Jackson and SnakeYAML keep the last one silently, and
 *       Jackson's {@code STRICT_DUPLICATE_DETECTION} names only the second occurrence, without
 *       its path; the walk names the path and both lines;</li>
 *   <li>aliases ({@code *name}, including merge keys {@code <<: *name}): Jackson's YAML parser
 *       does not expand them but hands the anchor's name over as a string, so {@code quota: *q}
 *       would read as the text "q"; and expanded, they are how a "billion laughs" file grows;</li>
 *   <li>nesting deeper than {@link #MAX_DEPTH} (the configuration's deepest value is 7 levels
 *       down, {@code routes[].vend.limits.functions.NAME.scope});</li>
 *   <li>a second YAML document after the first, which would otherwise be ignored.</li>
 * </ul>
 * Each problem is one line naming the YAML path (or the file), the value and what is expected.
 * Duplicate keys are all listed; an alias, too deep a nesting or a syntax error ends the walk.
 */
public final class ConfigSource {

  /** The deepest nesting of mappings and lists accepted; the configuration itself needs 7. */
  static final int MAX_DEPTH = 20;

  /**
   * The largest size in bytes a configuration may be given ({@code GatewayConfig.MAX_BYTES_CEILING}
   * publishes it): the text is held in memory whole.
   */
  public static final int MAX_BYTES_CEILING = 64 << 20;

  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private final JsonParser parser;
  private final List<String> problems = new ArrayList<>();

  private ConfigSource(JsonParser parser) {
    this.parser = parser;
  }

  /**
   * Reads a file of at most {@code maxBytes} bytes as UTF-8 text.
   *
   * @throws ConfigException when the file cannot be read, is larger than the bound or is not UTF-8
   */
  public static String read(Path file, long maxBytes) throws ConfigException {
    String source = file.toString();
    byte[] bytes;
    try {
      if (Files.isDirectory(file)) {
        throw new ConfigException(source, List.of("is a directory; expected a YAML file"));
      }
      long size = Files.isRegularFile(file) ? Files.size(file) : 0;
      if (size > maxBytes) {
        throw tooLarge(source, "the file is " + size + " bytes", maxBytes);
      }
      try (InputStream in = Files.newInputStream(file)) {
        bytes = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, maxBytes + 1));
      }
    } catch (NoSuchFileException e) {
      throw new ConfigException(source, List.of("cannot read the file: it does not exist"));
    } catch (AccessDeniedException e) {
      throw new ConfigException(source, List.of("cannot read the file: permission denied"));
    } catch (IOException e) {
      throw new ConfigException(source, List.of("cannot read the file: " + IoFailure.inWords(e)));
    }
    if (bytes.length > maxBytes) { // grew since its size was taken, or not a regular file
      throw tooLarge(source, "the file is larger than " + maxBytes + " bytes", maxBytes);
    }
    ByteBuffer in = ByteBuffer.wrap(bytes);
    CharBuffer out = CharBuffer.allocate(bytes.length);
    CoderResult r = StandardCharsets.UTF_8.newDecoder().decode(in, out, true);
    if (r.isError()) {
      throw new ConfigException(source, List.of("the byte at offset " + in.position()
          + " is not valid UTF-8; expected a UTF-8 YAML file"));
    }
    return out.flip().toString();
  }

  /**
   * Refuses YAML text whose UTF-8 form is longer than {@code maxBytes}, the bound a file has.
   *
   * @throws ConfigException when it is longer
   */
  public static void checkLength(String yaml, String source, long maxBytes) throws ConfigException {
    // a char is at least one UTF-8 byte, so a text of more chars than the bound is over it
    if (yaml.length() > maxBytes) {
      throw tooLarge(source, "the text is more than " + maxBytes + " bytes", maxBytes);
    }
    int bytes = yaml.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > maxBytes) {
      throw tooLarge(source, "the text is " + bytes + " bytes", maxBytes);
    }
  }

  private static ConfigException tooLarge(String source, String found, long maxBytes) {
    return new ConfigException(source, List.of(found + "; expected at most " + maxBytes
        + " bytes (headroom serve --max-config-bytes sets the bound)"));
  }

  /**
   * Parses YAML text into a tree: a {@link MissingNode} when the text holds no document.
   *
   * @throws ConfigException listing the text's problems (see the class comment)
   */
  static JsonNode tree(String yaml, String source) throws ConfigException {
    LoaderOptions options = new LoaderOptions();
    // SnakeYAML's scanner stops past the largest bound a file may be given, whatever path the
    // text came by (a code point is at least one byte)
    options.setCodePointLimit(MAX_BYTES_CEILING);
    // These two act in SnakeYAML's composer, which Jackson's event parser does not use: set so
    // that nothing built on this factory accepts what the walk below refuses. Duplicate keys stay
    // allowed here: refusing them would turn on Jackson's STRICT_DUPLICATE_DETECTION, which stops
    // at the first duplicate and names neither its path nor the first occurrence.
    options.setMaxAliasesForCollections(0);
    options.setNestingDepthLimit(MAX_DEPTH);
    YAMLFactory factory = YAMLFactory.builder().loaderOptions(options).build();
    try (JsonParser p = factory.createParser(yaml)) {
      ConfigSource walk = new ConfigSource(p);
      JsonNode root = walk.document();
      if (!walk.problems.isEmpty()) {
        throw new ConfigException(source, walk.problems);
      }
      return root;
    } catch (IOException e) { // only from closing a parser over a String
      throw new ConfigException(source, List.of("cannot read the text: " + e.getMessage()));
    }
  }

  private JsonNode document() throws IOException {
    try {
      JsonToken t = parser.nextToken();
      if (t == null) {
        return MissingNode.getInstance();
      }
      JsonNode root = value(t, "", 1);
      if (problems.isEmpty() && parser.nextToken() != null) {
        problems.add("(root): a second YAML document at line " + line() + " is not valid; expected one "
            + "document (a mapping with service, upstreams, policies and routes)");
      }
      return root;
    } catch (Refused e) {
      return null;
    } catch (JsonProcessingException e) {
      problems.add(syntax(e));
      return null;
    }
  }

  private JsonNode value(JsonToken t, String path, int depth) throws IOException {
    switch (t) {
      case START_OBJECT -> {
        deeper(path, depth);
        ObjectNode o = NODES.objectNode();
        Map<String, Integer> lines = new HashMap<>();
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
          String key = parser.currentName();
          int line = line();
          String at = path.isEmpty() ? key : path + "." + key;
          Integer first = lines.putIfAbsent(key, line);
          if (first != null) {
            problems.add(at + ": duplicate key \"" + key + "\" at line " + line + ", first at line " + first
                + "; expected each key once in a mapping");
          }
          o.set(key, value(parser.nextToken(), at, depth + 1));
        }
        return o;
      }
      case START_ARRAY -> {
        deeper(path, depth);
        ArrayNode a = NODES.arrayNode();
        for (JsonToken e = parser.nextToken(); e != JsonToken.END_ARRAY; e = parser.nextToken()) {
          a.add(value(e, path + "[" + a.size() + "]", depth + 1));
        }
        return a;
      }
      case VALUE_STRING -> {
        if (((YAMLParser) parser).isCurrentAlias()) {
          problems.add(where(path) + ": the alias *" + parser.getText() + " at line " + line() + " is not valid; "
              + "expected the value written out (aliases and merge keys are not accepted in the configuration)");
          throw new Refused();
        }
        return NODES.textNode(parser.getText());
      }
      case VALUE_NUMBER_INT -> {
        return switch (parser.getNumberType()) {
          case INT -> NODES.numberNode(parser.getIntValue());
          case LONG -> NODES.numberNode(parser.getLongValue());
          default -> NODES.numberNode(parser.getBigIntegerValue());
        };
      }
      case VALUE_NUMBER_FLOAT -> {
        return NODES.numberNode(parser.getDoubleValue());
      }
      case VALUE_TRUE, VALUE_FALSE -> {
        return NODES.booleanNode(t == JsonToken.VALUE_TRUE);
      }
      case VALUE_EMBEDDED_OBJECT -> { // !!binary
        Object o = parser.getEmbeddedObject();
        return o instanceof byte[] b ? NODES.binaryNode(b) : NODES.pojoNode(o);
      }
      default -> {
        return NODES.nullNode();
      }
    }
  }

  private void deeper(String path, int depth) {
    if (depth > MAX_DEPTH) {
      problems.add(where(path) + ": nested " + depth + " levels deep at line " + line() + " is not valid; "
          + "expected at most " + MAX_DEPTH + " levels of mappings and lists");
      throw new Refused();
    }
  }

  private int line() {
    return parser.currentTokenLocation().getLineNr();
  }

  private static String where(String path) {
    return path.isEmpty() ? "(root)" : path;
  }

  /** One line from SnakeYAML's multi-line report: where, what, and while doing what. */
  private static String syntax(JsonProcessingException e) {
    if (e.getCause() instanceof MarkedYAMLException m && m.getProblemMark() != null) {
      String context = m.getContext() == null ? "" : " (" + m.getContext().strip() + ")";
      return "not valid YAML at line " + (m.getProblemMark().getLine() + 1) + ", column "
          + (m.getProblemMark().getColumn() + 1) + ": " + m.getProblem().strip() + context;
    }
    String where = e.getLocation() == null ? ""
        : " at line " + e.getLocation().getLineNr() + ", column " + e.getLocation().getColumnNr();
    String what = e.getOriginalMessage().lines().findFirst().orElse("")
        .replaceAll("<org\\.yaml\\.snakeyaml\\.events\\.(\\w+)Event\\b[^>]*>", "$1");
    return "not valid YAML" + where + ": " + what;
  }

  /** Ends the walk at a problem that makes the rest of the file not worth reading. */
  private static final class Refused extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Refused() {
      super(null, null, false, false);
    }
  }
}
