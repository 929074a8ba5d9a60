package dev.headroom.http.partition;

import dev.headroom.PartitionKey;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * Derives the {@link PartitionKey} a request is counted in, from a {@link RequestView}: the
 * partitioning of a policy made executable (draft-ietf-httpapi-ratelimit-headers-09 section 6.1:
 * "per user, per application, per HTTP method, per resource, or some combination").
 *
 * <h2>Components and the keys they make</h2>
 *
 * <table>
 *   <caption>What each derivation reads, the key it makes, and its fallback</caption>
 *   <tr><th>spec</th><th>reads</th><th>key</th><th>when the input is missing or malformed</th></tr>
 *   <tr><td>{@code client-ip}</td><td>{@link ClientAddressResolver}</td>
 *       <td>{@code ip:203.0.113.7}, {@code ip:2001:db8:1:2::/64}</td><td>{@code ip:unknown}</td></tr>
 *   <tr><td>{@code api-key}, {@code header:Name}</td><td>one header ({@code X-Api-Key} for
 *       {@code api-key})</td><td>{@code key:} + the first 16 bytes of SHA-256 of the value, in
 *       lowercase hex; never the raw value</td><td>{@code key:none}</td></tr>
 *   <tr><td>{@code user}</td><td>{@link RequestView#user()}</td><td>{@code user:alice}; a value
 *       longer than {@value #MAX_USER_LENGTH} characters or not printable ASCII becomes
 *       {@code user:sha256-} + hash as above</td><td>{@code user:anonymous}</td></tr>
 *   <tr><td>{@code route}</td><td>{@link RequestView#route()}</td><td>{@code route:/api/items/{id}}
 *       (hashed as for users when oversized); never the raw path</td><td>{@code route:unmatched}</td></tr>
 *   <tr><td>{@code method}</td><td>{@link RequestView#method()}</td><td>{@code method:GET}</td>
 *       <td>{@code method:other} (not a token of at most 16 characters)</td></tr>
 *   <tr><td>{@code global}</td><td>nothing</td><td>{@code global}</td><td>(never missing)</td></tr>
 * </table>
 *
 * <p>A header is missing when absent, empty, longer than {@value #MAX_HEADER_VALUE_LENGTH}
 * characters, or sent on more than one field line (two different credentials in one request are
 * not guessed between).
 *
 * <p>Composites ({@code client-ip+route}) join their components' keys with {@code |}; a composite
 * key longer than {@link PartitionKey#MAX_LENGTH} becomes {@code sha256-} + the hash of the whole.
 * Alternatives ({@code api-key|client-ip}) use the first whose every input is present, and the
 * last alternative's fallbacks when none is.
 *
 * <p>Immutable and thread-safe.
 */
public final class PartitionKeyDerivation {

  /** Header values longer than this are treated as missing. */
  public static final int MAX_HEADER_VALUE_LENGTH = 4096;

  /** User names up to this length of printable ASCII are kept readable in the key. */
  public static final int MAX_USER_LENGTH = 128;

  /** Route templates up to this length are kept readable in the key. */
  public static final int MAX_ROUTE_LENGTH = 256;

  /** The header {@code api-key} reads. */
  public static final String DEFAULT_API_KEY_HEADER = "X-Api-Key";

  /** Who a derivation tells apart: the Graceful Boundaries {@code scope} vocabulary. */
  public enum Scope {
    /** One partition per client address. */
    IP("ip"),
    /** One partition per API key or credential header. */
    KEY("key"),
    /** One partition per authenticated user. */
    USER("user"),
    /** Callers are not told apart (global, or per route or method only). */
    GLOBAL("global");

    private final String token;

    Scope(String token) {
      this.token = token;
    }

    /** The token, as sent in {@code scope}. */
    public String token() {
      return token;
    }
  }

  private final List<List<Part>> alternatives;
  private final String spec;

  private PartitionKeyDerivation(List<List<Part>> alternatives) {
    this.alternatives = alternatives;
    StringBuilder s = new StringBuilder();
    for (List<Part> alt : alternatives) {
      if (s.length() > 0) {
        s.append('|');
      }
      for (int i = 0; i < alt.size(); i++) {
        s.append(i == 0 ? "" : "+").append(alt.get(i).spec());
      }
    }
    this.spec = s.toString();
  }

  private static PartitionKeyDerivation of(Part part) {
    return new PartitionKeyDerivation(List.of(List.of(part)));
  }

  /** Every request in one partition: {@link PartitionKey#GLOBAL}. */
  public static PartitionKeyDerivation global() {
    return of(new Part("global", Scope.GLOBAL, "global") {
      @Override
      Optional<String> component(RequestView r) {
        return Optional.of("global");
      }
    });
  }

  /** One partition per client address, as the resolver finds it. */
  public static PartitionKeyDerivation clientAddress(ClientAddressResolver resolver) {
    Objects.requireNonNull(resolver, "resolver");
    return of(new Part("client-ip", Scope.IP, "ip:unknown") {
      @Override
      Optional<String> component(RequestView r) {
        return resolver.partition(r).map(a -> "ip:" + a);
      }
    });
  }

  /**
   * One partition per value of a header, such as an API key; the value is hashed, never kept.
   *
   * @throws IllegalArgumentException when the name is not a header field name (an RFC 9110 token)
   */
  public static PartitionKeyDerivation header(String name) {
    if (name == null || name.isEmpty() || name.length() > 64 || !isToken(name)) {
      throw new IllegalArgumentException("partitioning: header: expected a header field name (letters, digits, "
          + "- and other token characters, at most 64), got " + (name == null ? "null" : "'" + CidrRange.shorten(name) + "'"));
    }
    String spec = name.equalsIgnoreCase(DEFAULT_API_KEY_HEADER) ? "api-key" : "header:" + name;
    return of(new Part(spec, Scope.KEY, "key:none") {
      @Override
      Optional<String> component(RequestView r) {
        List<String> values = r.headers(name);
        if (values.size() != 1) {
          return Optional.empty();
        }
        String v = values.get(0).strip();
        if (v.isEmpty() || v.length() > MAX_HEADER_VALUE_LENGTH) {
          return Optional.empty();
        }
        return Optional.of("key:" + sha256Hex(v));
      }
    });
  }

  /** One partition per API key in {@value #DEFAULT_API_KEY_HEADER}, hashed. */
  public static PartitionKeyDerivation apiKey() {
    return header(DEFAULT_API_KEY_HEADER);
  }

  /** One partition per authenticated user. */
  public static PartitionKeyDerivation user() {
    return of(new Part("user", Scope.USER, "user:anonymous") {
      @Override
      Optional<String> component(RequestView r) {
        return r.user().filter(u -> !u.isEmpty()).map(u -> "user:" + readableOrHash(u, MAX_USER_LENGTH));
      }
    });
  }

  /** One partition per matched route template. */
  public static PartitionKeyDerivation route() {
    return of(new Part("route", Scope.GLOBAL, "route:unmatched") {
      @Override
      Optional<String> component(RequestView r) {
        return r.route().filter(t -> !t.isEmpty()).map(t -> "route:" + readableOrHash(t, MAX_ROUTE_LENGTH));
      }
    });
  }

  /** One partition per request method. */
  public static PartitionKeyDerivation method() {
    return of(new Part("method", Scope.GLOBAL, "method:other") {
      @Override
      Optional<String> component(RequestView r) {
        String m = r.method();
        return m != null && !m.isEmpty() && m.length() <= 16 && isToken(m) ? Optional.of("method:" + m) : Optional.empty();
      }
    });
  }

  /**
   * Parses a partitioning as written in configuration and in {@code QuotaPolicy.partitioning()}:
   * alternatives separated by {@code |}, each a composite of components joined by {@code +}:
   * {@code client-ip}, {@code api-key}, {@code header:Name}, {@code user}, {@code route},
   * {@code method}, {@code global}. For example {@code user|api-key|client-ip} or
   * {@code client-ip+route}.
   *
   * @param resolver how {@code client-ip} finds the client
   * @throws IllegalArgumentException naming the value, the bad component and what is expected
   */
  public static PartitionKeyDerivation parse(String spec, ClientAddressResolver resolver) {
    Objects.requireNonNull(resolver, "resolver");
    if (spec == null || spec.isBlank() || spec.length() > 256) {
      throw new IllegalArgumentException("partitioning: expected components such as client-ip, api-key, "
          + "header:Name, user, route, method, global joined by + and |, got "
          + (spec == null ? "null" : "'" + CidrRange.shorten(spec) + "'"));
    }
    PartitionKeyDerivation result = null;
    for (String alt : spec.split("\\|", -1)) {
      PartitionKeyDerivation composite = null;
      for (String component : alt.split("\\+", -1)) {
        PartitionKeyDerivation d = component(component.strip(), spec, resolver);
        composite = composite == null ? d : composite.and(d);
      }
      result = result == null ? composite : result.orElse(composite);
    }
    return result;
  }

  private static PartitionKeyDerivation component(String c, String spec, ClientAddressResolver resolver) {
    switch (c.toLowerCase(Locale.ROOT)) {
      case "client-ip":
      case "ip":
        return clientAddress(resolver);
      case "api-key":
      case "key":
        return apiKey();
      case "user":
        return user();
      case "route":
        return route();
      case "method":
        return method();
      case "global":
        return global();
      default:
        if (c.regionMatches(true, 0, "header:", 0, 7)) {
          return header(c.substring(7).strip());
        }
        throw new IllegalArgumentException("partitioning: in '" + CidrRange.shorten(spec) + "', expected one of "
            + "client-ip, api-key, header:Name, user, route, method, global, got '" + CidrRange.shorten(c) + "'");
    }
  }

  /** This derivation combined with another: one partition per pair of values. */
  public PartitionKeyDerivation and(PartitionKeyDerivation other) {
    if (alternatives.size() != 1 || other.alternatives.size() != 1) {
      throw new IllegalArgumentException("partitioning: a composite joins single derivations; got '"
          + spec + "' and '" + other.spec + "' (write alternatives of composites: a+b|c)");
    }
    List<Part> parts = new ArrayList<>(alternatives.get(0));
    parts.addAll(other.alternatives.get(0));
    if (parts.size() > 8) {
      throw new IllegalArgumentException("partitioning: expected at most 8 components in a composite, got '"
          + spec + "+" + other.spec + "'");
    }
    return new PartitionKeyDerivation(List.of(List.copyOf(parts)));
  }

  /** This derivation, or the other when an input of this one is missing or malformed. */
  public PartitionKeyDerivation orElse(PartitionKeyDerivation other) {
    List<List<Part>> alts = new ArrayList<>(alternatives);
    alts.addAll(other.alternatives);
    if (alts.size() > 8) {
      throw new IllegalArgumentException("partitioning: expected at most 8 alternatives, got '" + spec + "|" + other.spec + "'");
    }
    return new PartitionKeyDerivation(List.copyOf(alts));
  }

  /** The partition the request is counted in; never fails, see the class comment for fallbacks. */
  public PartitionKey derive(RequestView request) {
    for (int a = 0; a < alternatives.size(); a++) {
      List<Part> parts = alternatives.get(a);
      boolean last = a == alternatives.size() - 1;
      StringBuilder key = new StringBuilder();
      boolean complete = true;
      for (Part part : parts) {
        Optional<String> c = part.component(request);
        if (c.isEmpty()) {
          complete = false;
          if (!last) {
            break;
          }
        }
        if (key.length() > 0) {
          key.append('|');
        }
        key.append(c.orElse(part.fallback));
      }
      if (complete || last) {
        String k = key.toString();
        if (k.equals("global")) {
          return PartitionKey.GLOBAL;
        }
        return PartitionKey.of(k.length() <= PartitionKey.MAX_LENGTH ? k : "sha256-" + sha256Hex(k));
      }
    }
    throw new IllegalStateException("unreachable: a derivation has at least one alternative");
  }

  /**
   * Who this derivation tells apart, for the discovery document and the refusal's {@code scope}:
   * the most specific caller component of the first alternative (user, then key, then ip), or
   * {@link Scope#GLOBAL} when it tells no callers apart.
   */
  public Scope scope() {
    Scope best = Scope.GLOBAL;
    for (Part p : alternatives.get(0)) {
      if (rank(p.scope) > rank(best)) {
        best = p.scope;
      }
    }
    return best;
  }

  private static int rank(Scope s) {
    switch (s) {
      case USER:
        return 3;
      case KEY:
        return 2;
      case IP:
        return 1;
      default:
        return 0;
    }
  }

  /** The derivation in the syntax {@link #parse} reads. */
  public String spec() {
    return spec;
  }

  @Override
  public String toString() {
    return spec;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PartitionKeyDerivation && ((PartitionKeyDerivation) o).spec.equals(spec);
  }

  @Override
  public int hashCode() {
    return spec.hashCode();
  }

  static String sha256Hex(String value) {
    return HexFormat.of().formatHex(sha256(value.getBytes(StandardCharsets.UTF_8)), 0, 16);
  }

  static byte[] sha256(byte[] bytes) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(bytes);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every Java platform", e);
    }
  }

  private static String readableOrHash(String value, int maxLength) {
    if (value.length() <= maxLength) {
      boolean printable = true;
      for (int i = 0; i < value.length() && printable; i++) {
        char c = value.charAt(i);
        printable = c > 0x20 && c < 0x7f && c != '|';
      }
      if (printable) {
        return value;
      }
    }
    return "sha256-" + sha256Hex(value);
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

  /** One component: the key text it reads from a request, and what stands in when it cannot. */
  private abstract static class Part {
    final String spec;
    final Scope scope;
    final String fallback;

    Part(String spec, Scope scope, String fallback) {
      this.spec = spec;
      this.scope = scope;
      this.fallback = fallback;
    }

    String spec() {
      return spec;
    }

    abstract Optional<String> component(RequestView r);
  }
}
