package dev.headroom.enforcement.partition;

import dev.headroom.PartitionKey;
import dev.headroom.Partitioning;
import dev.headroom.http.body.LimitScope;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
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
 *   <tr><td>{@code client-cert}</td><td>{@link RequestView#clientCertificateSubject()}</td>
 *       <td>{@code cert:CN=alice,O=Example}; a subject longer than {@value #MAX_SUBJECT_LENGTH}
 *       characters or not printable ASCII becomes {@code cert:sha256-} + hash as above. A subject
 *       names a client, it is not a secret, but {@code pk} hashes it as it hashes every key</td>
 *       <td>{@code cert:none}</td></tr>
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
 * <p>The grammar and its typed value are headroom-core's {@link Partitioning}; a derivation is
 * built from the typed value once, at configuration ({@link #of(Partitioning, ClientAddressResolver)}),
 * and never reads text afterwards.
 *
 * <p>Immutable and thread-safe.
 */
public final class PartitionKeyDerivation {

  /** Header values longer than this are treated as missing. */
  public static final int MAX_HEADER_VALUE_LENGTH = 4096;

  /** User names up to this length of printable ASCII are kept readable in the key. */
  public static final int MAX_USER_LENGTH = 128;

  /** Certificate subjects up to this length of printable ASCII are kept readable in the key. */
  public static final int MAX_SUBJECT_LENGTH = 256;

  /** Route templates up to this length are kept readable in the key. */
  public static final int MAX_ROUTE_LENGTH = 256;

  /** The header {@code api-key} reads. */
  public static final String DEFAULT_API_KEY_HEADER = Partitioning.API_KEY_HEADER;

  private final List<List<Part>> alternatives;
  private final Partitioning partitioning;
  /**
   * The resolver when the derivation is {@code client-ip} alone, whose key may then depend on the
   * connection's peer alone and be kept per connection ({@link PeerKeys}); null otherwise.
   */
  private final ClientAddressResolver clientOnly;
  /**
   * Whether the derivation is {@code client-cert} alone: the certificate is the connection's, so
   * its key is kept per connection ({@link PeerKeys}) and derived once.
   */
  private final boolean certificateOnly;

  private PartitionKeyDerivation(List<List<Part>> alternatives) {
    this(alternatives, Partitioning.of(alternatives.stream().map(alt -> alt.stream().map(p -> p.typed).toList()).toList()));
  }

  private PartitionKeyDerivation(List<List<Part>> alternatives, Partitioning partitioning) {
    this.alternatives = alternatives;
    this.partitioning = partitioning;
    this.clientOnly = alternatives.size() == 1 && alternatives.get(0).size() == 1
        && alternatives.get(0).get(0) instanceof ClientPart ? ((ClientPart) alternatives.get(0).get(0)).resolver : null;
    this.certificateOnly = alternatives.size() == 1 && alternatives.get(0).size() == 1
        && alternatives.get(0).get(0).typed.component() == Partitioning.Component.CLIENT_CERT;
  }

  private static PartitionKeyDerivation of(Part part) {
    return new PartitionKeyDerivation(List.of(List.of(part)));
  }

  /**
   * The derivation of a typed partitioning, as a policy holds it ({@code QuotaPolicy.partitioning()}):
   * built once, at configuration; deriving a key reads no text.
   *
   * @param resolver how {@code client-ip} finds the client
   */
  public static PartitionKeyDerivation of(Partitioning partitioning, ClientAddressResolver resolver) {
    Objects.requireNonNull(partitioning, "partitioning");
    Objects.requireNonNull(resolver, "resolver");
    List<List<Part>> alts = new ArrayList<>();
    for (List<Partitioning.Part> alt : partitioning.alternatives()) {
      List<Part> parts = new ArrayList<>();
      for (Partitioning.Part p : alt) {
        parts.add(part(p, resolver));
      }
      alts.add(List.copyOf(parts));
    }
    return new PartitionKeyDerivation(List.copyOf(alts), partitioning);
  }

  private static Part part(Partitioning.Part p, ClientAddressResolver resolver) {
    switch (p.component()) {
      case CLIENT_IP:
        return new ClientPart(p, resolver);
      case API_KEY:
      case HEADER:
        String name = p.headerName().orElseThrow();
        return new Part(p, LimitScope.KEY, "key:none") {
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
        };
      case USER:
        return new Part(p, LimitScope.USER, "user:anonymous") {
          @Override
          Optional<String> component(RequestView r) {
            return r.user().filter(u -> !u.isEmpty()).map(u -> "user:" + readableOrHash(u, MAX_USER_LENGTH));
          }
        };
      case CLIENT_CERT:
        return new Part(p, LimitScope.KEY, "cert:none") {
          @Override
          Optional<String> component(RequestView r) {
            return r.clientCertificateSubject().filter(s -> !s.isEmpty())
                .map(s -> "cert:" + readableOrHash(s, MAX_SUBJECT_LENGTH, true));
          }
        };
      case ROUTE:
        return new Part(p, LimitScope.GLOBAL, "route:unmatched") {
          @Override
          Optional<String> component(RequestView r) {
            return r.route().filter(t -> !t.isEmpty()).map(t -> "route:" + readableOrHash(t, MAX_ROUTE_LENGTH));
          }
        };
      case METHOD:
        return new Part(p, LimitScope.GLOBAL, "method:other") {
          @Override
          Optional<String> component(RequestView r) {
            String m = r.method();
            return m != null && !m.isEmpty() && m.length() <= 16 && isToken(m) ? Optional.of("method:" + m) : Optional.empty();
          }
        };
      case GLOBAL:
        return new Part(p, LimitScope.GLOBAL, "global") {
          @Override
          Optional<String> component(RequestView r) {
            return Optional.of("global");
          }
        };
      default:
        throw new IllegalStateException("unreachable: every component is handled, got " + p.component());
    }
  }

  /** Every request in one partition: {@link PartitionKey#GLOBAL}. */
  public static PartitionKeyDerivation global() {
    return of(part(Partitioning.Part.of(Partitioning.Component.GLOBAL), ClientAddressResolver.direct()));
  }

  /** One partition per client address, as the resolver finds it. */
  public static PartitionKeyDerivation clientAddress(ClientAddressResolver resolver) {
    Objects.requireNonNull(resolver, "resolver");
    return of(part(Partitioning.Part.of(Partitioning.Component.CLIENT_IP), resolver));
  }

  /**
   * One partition per value of a header, such as an API key; the value is hashed, never kept.
   *
   * @throws IllegalArgumentException when the name is not a header field name (an RFC 9110 token)
   */
  public static PartitionKeyDerivation header(String name) {
    return of(part(Partitioning.Part.header(name), ClientAddressResolver.direct()));
  }

  /** One partition per API key in {@value #DEFAULT_API_KEY_HEADER}, hashed. */
  public static PartitionKeyDerivation apiKey() {
    return header(DEFAULT_API_KEY_HEADER);
  }

  /** One partition per authenticated user. */
  public static PartitionKeyDerivation user() {
    return of(part(Partitioning.Part.of(Partitioning.Component.USER), ClientAddressResolver.direct()));
  }

  /** One partition per matched route template. */
  public static PartitionKeyDerivation route() {
    return of(part(Partitioning.Part.of(Partitioning.Component.ROUTE), ClientAddressResolver.direct()));
  }

  /** One partition per request method. */
  public static PartitionKeyDerivation method() {
    return of(part(Partitioning.Part.of(Partitioning.Component.METHOD), ClientAddressResolver.direct()));
  }

  /**
   * Reads a partitioning as written in configuration ({@link Partitioning#parse}) and derives from it:
   * alternatives separated by {@code |}, each a composite of components joined by {@code +}:
   * {@code client-ip}, {@code api-key}, {@code header:Name}, {@code user}, {@code route},
   * {@code method}, {@code global}. For example {@code user|api-key|client-ip} or
   * {@code client-ip+route}. A policy's partitioning is already typed: use {@link #of(Partitioning,
   * ClientAddressResolver)}.
   *
   * @param resolver how {@code client-ip} finds the client
   * @throws IllegalArgumentException naming the value, the bad component and what is expected
   */
  public static PartitionKeyDerivation parse(String spec, ClientAddressResolver resolver) {
    Objects.requireNonNull(resolver, "resolver");
    return of(Partitioning.parse(spec), resolver);
  }

  /** This derivation combined with another: one partition per pair of values. */
  public PartitionKeyDerivation and(PartitionKeyDerivation other) {
    if (alternatives.size() != 1 || other.alternatives.size() != 1) {
      throw new IllegalArgumentException("partitioning: a composite joins single derivations; got '"
          + spec() + "' and '" + other.spec() + "' (write alternatives of composites: a+b|c)");
    }
    List<Part> parts = new ArrayList<>(alternatives.get(0));
    parts.addAll(other.alternatives.get(0));
    if (parts.size() > Partitioning.MAX_COMPONENTS) {
      throw new IllegalArgumentException("partitioning: expected at most " + Partitioning.MAX_COMPONENTS
          + " components in a composite, got '" + spec() + "+" + other.spec() + "'");
    }
    return new PartitionKeyDerivation(List.of(List.copyOf(parts)));
  }

  /** This derivation, or the other when an input of this one is missing or malformed. */
  public PartitionKeyDerivation orElse(PartitionKeyDerivation other) {
    List<List<Part>> alts = new ArrayList<>(alternatives);
    alts.addAll(other.alternatives);
    if (alts.size() > Partitioning.MAX_ALTERNATIVES) {
      throw new IllegalArgumentException("partitioning: expected at most " + Partitioning.MAX_ALTERNATIVES
          + " alternatives, got '" + spec() + "|" + other.spec() + "'");
    }
    return new PartitionKeyDerivation(List.copyOf(alts));
  }

  /**
   * The partition the request is counted in; never fails, see the class comment for fallbacks. A
   * {@code client-ip} key that depends on the connection's peer alone, and a {@code client-cert}
   * key, are derived once per connection when the request's host keeps {@link RequestView#peerKeys()}.
   */
  public PartitionKey derive(RequestView request) {
    if (clientOnly == null && !certificateOnly) {
      return deriveEach(request);
    }
    PeerKeys kept = request.peerKeys();
    PartitionKey key = kept.get(this);
    if (key == null) {
      key = deriveEach(request);
      if (kept != PeerKeys.NONE && (certificateOnly || clientOnly.readsPeerOnly(request))) {
        kept.put(this, key);
      }
    }
    return key;
  }

  private PartitionKey deriveEach(RequestView request) {
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
   * {@link LimitScope#GLOBAL} when it tells no callers apart.
   */
  public LimitScope scope() {
    return LimitScope.of(partitioning);
  }



  /** The typed partitioning this derivation reads. */
  public Partitioning partitioning() {
    return partitioning;
  }

  /** The derivation in the syntax {@link #parse} reads: the partitioning's canonical text. */
  public String spec() {
    return partitioning.toString();
  }

  @Override
  public String toString() {
    return spec();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PartitionKeyDerivation && ((PartitionKeyDerivation) o).partitioning.equals(partitioning);
  }

  @Override
  public int hashCode() {
    return partitioning.hashCode();
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
    return readableOrHash(value, maxLength, false);
  }

  /** The value when short and printable ({@code spaces} allowed or not, never {@code |}), else its hash. */
  private static String readableOrHash(String value, int maxLength, boolean spaces) {
    if (value.length() <= maxLength) {
      boolean printable = true;
      for (int i = 0; i < value.length() && printable; i++) {
        char c = value.charAt(i);
        printable = (c > 0x20 || (spaces && c == 0x20)) && c < 0x7f && c != '|';
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

  /** {@code client-ip}: the client's address as the resolver finds it. */
  private static final class ClientPart extends Part {
    final ClientAddressResolver resolver;

    ClientPart(Partitioning.Part typed, ClientAddressResolver resolver) {
      super(typed, LimitScope.IP, "ip:unknown");
      this.resolver = resolver;
    }

    @Override
    Optional<String> component(RequestView r) {
      return resolver.partition(r).map(a -> "ip:" + a);
    }
  }

  /** One component: the key text it reads from a request, and what stands in when it cannot. */
  private abstract static class Part {
    final Partitioning.Part typed;
    final LimitScope scope;
    final String fallback;

    Part(Partitioning.Part typed, LimitScope scope, String fallback) {
      this.typed = typed;
      this.scope = scope;
      this.fallback = fallback;
    }

    abstract Optional<String> component(RequestView r);
  }
}
