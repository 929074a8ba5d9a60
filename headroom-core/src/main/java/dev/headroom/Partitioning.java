package dev.headroom;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * How a {@link QuotaPolicy} splits its callers into partitions, as a typed value
 * (draft-ietf-httpapi-ratelimit-headers-09 section 6.1: "per user, per application, per HTTP
 * method, per resource, or some combination"). It is read once, from configuration, by
 * {@link #parse(String)}; everything afterwards (key derivation per request, the limit type of a
 * refusal or a discovery entry) reads the parts, never the text again.
 *
 * <h2>Grammar</h2>
 *
 * <pre>
 * partitioning = alternative *( "|" alternative )         ; at most 8 alternatives
 * alternative  = component *( "+" component )              ; at most 8 components
 * component    = "client-ip" / "api-key" / "header:" field-name / "user" / "client-cert"
 *              / "route" / "method" / "global"
 * </pre>
 *
 * <p>Whitespace around components is ignored, component names are case-insensitive, {@code ip}
 * and {@code key} are accepted for {@code client-ip} and {@code api-key}, and
 * {@code header:X-Api-Key} is {@code api-key}. A composite ({@code client-ip+route}) is one
 * partition per combination of values; alternatives ({@code api-key|client-ip}) use the first
 * whose every input a request carries. What each component reads from a request is the HTTP
 * layer's business (headroom-http's {@code PartitionKeyDerivation}).
 *
 * <p>{@link #toString()} is the canonical text, which {@link #parse(String)} reads back to an equal
 * value. Immutable and thread-safe; equal when the canonical texts are equal.
 */
public final class Partitioning {

  /** Longest accepted text: anything longer is refused before it is read. */
  public static final int MAX_TEXT_LENGTH = 256;

  /** Most alternatives ({@code |}) in one partitioning. */
  public static final int MAX_ALTERNATIVES = 8;

  /** Most components ({@code +}) in one alternative. */
  public static final int MAX_COMPONENTS = 8;

  /** Longest header field name a {@code header:} component may name. */
  public static final int MAX_HEADER_NAME_LENGTH = 64;

  /** The header {@link Component#API_KEY} reads. */
  public static final String API_KEY_HEADER = "X-Api-Key";

  private static final String COMPONENTS =
      "client-ip, api-key, header:Name, user, client-cert, route, method or global";

  /** Every request in one partition. */
  public static final Partitioning GLOBAL = new Partitioning(List.of(List.of(new Part(Component.GLOBAL, null))));

  /** One partition per client address. */
  public static final Partitioning CLIENT_IP = new Partitioning(List.of(List.of(new Part(Component.CLIENT_IP, null))));

  /** One partition per API key ({@value #API_KEY_HEADER}). */
  public static final Partitioning API_KEY = new Partitioning(List.of(List.of(new Part(Component.API_KEY, null))));

  /** What a component reads from a request. */
  public enum Component {
    /** The client's address. */
    CLIENT_IP("client-ip"),
    /** The API key header, {@value Partitioning#API_KEY_HEADER}. */
    API_KEY("api-key"),
    /** A named header, such as a tenant or credential header. */
    HEADER("header"),
    /** The authenticated user. */
    USER("user"),
    /** The subject of the client's verified TLS certificate. */
    CLIENT_CERT("client-cert"),
    /** The matched route template. */
    ROUTE("route"),
    /** The request method. */
    METHOD("method"),
    /** Nothing: every request alike. */
    GLOBAL("global");

    private final String token;

    Component(String token) {
      this.token = token;
    }

    /** The component's name in the grammar ({@code header} without its {@code :Name}). */
    public String token() {
      return token;
    }
  }

  /** One component of a composite: what it reads, and for {@link Component#HEADER} which header. */
  public static final class Part {
    private final Component component;
    private final String headerName;

    private Part(Component component, String headerName) {
      this.component = component;
      this.headerName = headerName;
    }

    /**
     * A component that names no header.
     *
     * @throws IllegalArgumentException for {@link Component#HEADER}, which needs a name: use {@link #header}
     */
    public static Part of(Component component) {
      Objects.requireNonNull(component, "component");
      if (component == Component.HEADER) {
        throw new IllegalArgumentException("partitioning: a header component needs a name; use Part.header(name)");
      }
      return new Part(component, null);
    }

    /**
     * A header component; {@value Partitioning#API_KEY_HEADER} (in any case) is {@link Component#API_KEY}.
     *
     * @throws IllegalArgumentException unless the name is an RFC 9110 token of at most
     *     {@value Partitioning#MAX_HEADER_NAME_LENGTH} characters
     */
    public static Part header(String name) {
      if (name == null || name.isEmpty() || name.length() > MAX_HEADER_NAME_LENGTH || !isToken(name)) {
        throw new IllegalArgumentException("partitioning: header: expected a header field name (letters, digits, "
            + "- and other token characters, at most " + MAX_HEADER_NAME_LENGTH + "), got "
            + (name == null ? "null" : "'" + QuotaPolicy.Builder.printable(name) + "'"));
      }
      return name.equalsIgnoreCase(API_KEY_HEADER) ? new Part(Component.API_KEY, null) : new Part(Component.HEADER, name);
    }

    /** What this component reads. */
    public Component component() {
      return component;
    }

    /** The header read: the named one for {@link Component#HEADER}, {@value Partitioning#API_KEY_HEADER} for
     * {@link Component#API_KEY}, empty otherwise. */
    public Optional<String> headerName() {
      return component == Component.API_KEY ? Optional.of(API_KEY_HEADER) : Optional.ofNullable(headerName);
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Part && ((Part) o).component == component && Objects.equals(((Part) o).headerName, headerName);
    }

    @Override
    public int hashCode() {
      return Objects.hash(component, headerName);
    }

    /** The component as written in the grammar. */
    @Override
    public String toString() {
      return component == Component.HEADER ? "header:" + headerName : component.token;
    }
  }

  private final List<List<Part>> alternatives;
  private final String text;

  private Partitioning(List<List<Part>> alternatives) {
    this.alternatives = alternatives;
    StringBuilder s = new StringBuilder();
    for (List<Part> alt : alternatives) {
      if (s.length() > 0) {
        s.append('|');
      }
      for (int i = 0; i < alt.size(); i++) {
        s.append(i == 0 ? "" : "+").append(alt.get(i));
      }
    }
    this.text = s.toString();
  }

  /**
   * A partitioning from its parts: alternatives, each a composite of parts.
   *
   * @throws IllegalArgumentException when there are no alternatives, an empty one, more than
   *     {@value #MAX_ALTERNATIVES} alternatives or more than {@value #MAX_COMPONENTS} parts in one
   */
  public static Partitioning of(List<List<Part>> alternatives) {
    Objects.requireNonNull(alternatives, "alternatives");
    if (alternatives.isEmpty() || alternatives.size() > MAX_ALTERNATIVES) {
      throw new IllegalArgumentException("partitioning: expected 1 to " + MAX_ALTERNATIVES + " alternatives, got "
          + alternatives.size());
    }
    List<List<Part>> copy = new ArrayList<>();
    for (List<Part> alt : alternatives) {
      if (alt.isEmpty() || alt.size() > MAX_COMPONENTS) {
        throw new IllegalArgumentException("partitioning: expected 1 to " + MAX_COMPONENTS
            + " components in an alternative, got " + alt.size());
      }
      copy.add(List.copyOf(alt));
    }
    return new Partitioning(List.copyOf(copy));
  }

  /**
   * Reads a partitioning as written in configuration (see the class comment for the grammar).
   *
   * @throws IllegalArgumentException naming the value, the position of the bad component (counted
   *     from 0) and what is expected there
   */
  public static Partitioning parse(String text) {
    if (text == null || text.isBlank() || text.length() > MAX_TEXT_LENGTH) {
      throw new IllegalArgumentException("partitioning: expected components " + COMPONENTS + " joined by + and |"
          + " (at most " + MAX_TEXT_LENGTH + " characters), got "
          + (text == null ? "null" : "'" + QuotaPolicy.Builder.printable(text) + "'"));
    }
    String shown = QuotaPolicy.Builder.printable(text);
    List<List<Part>> alternatives = new ArrayList<>();
    int start = 0;
    for (String alt : text.split("\\|", -1)) {
      if (alternatives.size() == MAX_ALTERNATIVES) {
        throw new IllegalArgumentException("partitioning: in '" + shown + "' at position " + (start - 1)
            + ": expected at most " + MAX_ALTERNATIVES + " alternatives joined by |");
      }
      List<Part> parts = new ArrayList<>();
      int at = start;
      for (String raw : alt.split("\\+", -1)) {
        if (parts.size() == MAX_COMPONENTS) {
          throw new IllegalArgumentException("partitioning: in '" + shown + "' at position " + (at - 1)
              + ": expected at most " + MAX_COMPONENTS + " components joined by +");
        }
        int lead = raw.length() - raw.stripLeading().length();
        parts.add(component(raw.strip(), shown, at + lead));
        at += raw.length() + 1;
      }
      alternatives.add(List.copyOf(parts));
      start += alt.length() + 1;
    }
    return new Partitioning(List.copyOf(alternatives));
  }

  private static Part component(String c, String shown, int position) {
    switch (c.toLowerCase(Locale.ROOT)) {
      case "client-ip":
      case "ip":
        return new Part(Component.CLIENT_IP, null);
      case "api-key":
      case "key":
        return new Part(Component.API_KEY, null);
      case "user":
        return new Part(Component.USER, null);
      case "client-cert":
        return new Part(Component.CLIENT_CERT, null);
      case "route":
        return new Part(Component.ROUTE, null);
      case "method":
        return new Part(Component.METHOD, null);
      case "global":
        return new Part(Component.GLOBAL, null);
      default:
        if (c.regionMatches(true, 0, "header:", 0, 7)) {
          String name = c.substring(7).strip();
          try {
            return Part.header(name);
          } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("partitioning: in '" + shown + "' at position " + position
                + ": expected a header field name after header: (letters, digits, - and other token characters, "
                + "at most " + MAX_HEADER_NAME_LENGTH + "), got '" + QuotaPolicy.Builder.printable(name) + "'", e);
          }
        }
        throw new IllegalArgumentException("partitioning: in '" + shown + "' at position " + position
            + ": expected one of " + COMPONENTS + ", got '" + QuotaPolicy.Builder.printable(c) + "'");
    }
  }

  /** The alternatives, first to last, each a composite of parts; unmodifiable. */
  public List<List<Part>> alternatives() {
    return alternatives;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Partitioning && ((Partitioning) o).text.equals(text);
  }

  @Override
  public int hashCode() {
    return text.hashCode();
  }

  /** The canonical text: parts as the grammar spells them, joined by {@code +} and {@code |}, no spaces. */
  @Override
  public String toString() {
    return text;
  }

  private static boolean isToken(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
          || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
      if (!ok) {
        return false;
      }
    }
    return true;
  }
}
