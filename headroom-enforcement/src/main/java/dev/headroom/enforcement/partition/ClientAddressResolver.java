package dev.headroom.enforcement.partition;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Finds the address of the client behind a request, honouring {@code Forwarded} (RFC 7239) or
 * {@code X-Forwarded-For} only when the direct peer is a trusted proxy.
 *
 * <p>Which header is read: one ({@link Builder#header}, {@code X-Forwarded-For} unless told), or
 * several in order of preference ({@link Builder#headers}): the first of them the request
 * carries is walked and the others are ignored, hop for hop, so two headers are never mixed into
 * one chain. Preferring {@code Forwarded} to {@code X-Forwarded-For} follows RFC 7239 section 7.4
 * and common proxy practice; the first preferred header present wins even when none of its hops
 * can be read ({@code for=unknown}), since a proxy that wrote it meant it.
 *
 * <h2>How the client is found</h2>
 *
 * <ol>
 *   <li>The direct peer ({@link RequestView#remoteAddress()}) is the client unless it lies in a
 *       trusted proxy range. Without trusted ranges the headers are never read: anyone can send
 *       them.
 *   <li>When the peer is trusted, the configured header's hops are walked from right to left
 *       (the rightmost was written by the proxy nearest to us). Each hop in a trusted range is
 *       skipped; the first hop outside every trusted range is the client.
 *   <li>When every hop is trusted, the leftmost hop is the client (a caller inside the trusted
 *       network).
 *   <li>When a hop cannot be read (malformed, {@code unknown}, obfuscated, or beyond
 *       {@link Builder#maxHops(int)} or {@link Builder#maxHeaderLength(int)}), the walk stops and
 *       the last trusted address reached is the client: the proxy that wrote the unreadable hop
 *       is the last party that can be held to it. A client can only ever make itself share its
 *       nearest proxy's partition, never pick another client's.
 * </ol>
 *
 * <p>IPv4-mapped IPv6 addresses are their IPv4 address throughout. Immutable and thread-safe.
 */
public final class ClientAddressResolver {

  /** Default for {@link Builder#maxHops(int)}: more proxies than any real deployment chains. */
  public static final int DEFAULT_MAX_HOPS = 16;

  /** Default for {@link Builder#maxHeaderLength(int)}, in characters scanned from the right. */
  public static final int DEFAULT_MAX_HEADER_LENGTH = 4096;

  /**
   * Default for {@link Builder#ipv6PrefixLength(int)}: a /64 is what one IPv6 subscriber is
   * routinely given, so counting per /64 stops one client from rotating through 2^64 partitions.
   */
  public static final int DEFAULT_IPV6_PREFIX_LENGTH = 64;

  private static final ClientAddressResolver DIRECT = builder().build();

  private final List<CidrRange> trusted;
  private final List<ForwardedHeader> headers;
  private final int maxHops;
  private final int maxHeaderLength;
  private final int ipv6PrefixLength;

  private ClientAddressResolver(Builder b) {
    this.trusted = List.copyOf(b.trusted);
    this.headers = List.copyOf(b.headers);
    this.maxHops = b.maxHops;
    this.maxHeaderLength = b.maxHeaderLength;
    this.ipv6PrefixLength = b.ipv6PrefixLength;
  }

  /** Trusts no proxy: the client is always the direct peer. */
  public static ClientAddressResolver direct() {
    return DIRECT;
  }

  /** Starts a resolver; with no trusted proxy it behaves as {@link #direct()}. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The client's address as canonical text (RFC 5952 for IPv6); empty when the request has no
   * direct peer address or it is not an IP literal (the documented fallback of the
   * {@code client-ip} derivation then applies).
   */
  public Optional<String> resolve(RequestView request) {
    return resolveBytes(request).map(IpLiteral::format);
  }

  /** The client's partition: its IPv4 address, or its IPv6 address cut to the configured prefix. */
  Optional<String> partition(RequestView request) {
    return resolveBytes(request).map(a -> a.length == 4 || ipv6PrefixLength == 128
        ? IpLiteral.format(a)
        : IpLiteral.format(IpLiteral.mask(a, ipv6PrefixLength)) + "/" + ipv6PrefixLength);
  }

  /**
   * Whether the client found for this request is its direct peer, read without any forwarding
   * header: no proxy is trusted, or the peer is not one (or has no IP address). The answer is then
   * the same for every request on the peer's connection ({@link PeerKeys}).
   */
  boolean readsPeerOnly(RequestView request) {
    if (trusted.isEmpty()) {
      return true;
    }
    Optional<byte[]> peer = peer(request);
    return peer.isEmpty() || !isTrusted(peer.get());
  }

  /** The direct peer's address, or empty when it has none or it is not an IP literal. */
  private static Optional<byte[]> peer(RequestView request) {
    Optional<String> remote = request.remoteAddress();
    if (remote.isEmpty()) {
      return Optional.empty();
    }
    String peerText = remote.get();
    int zone = peerText.indexOf('%');
    if (zone >= 0) {
      peerText = peerText.substring(0, zone); // a link-local zone says nothing about the client
    }
    if (peerText.startsWith("[") && peerText.endsWith("]")) {
      peerText = peerText.substring(1, peerText.length() - 1);
    }
    return IpLiteral.parse(peerText);
  }

  Optional<byte[]> resolveBytes(RequestView request) {
    Optional<byte[]> peer = peer(request);
    if (peer.isEmpty() || !isTrusted(peer.get())) {
      return peer;
    }
    byte[] client = peer.get();
    ForwardedHeader header = headers.get(0);
    List<String> lines = request.headers(header.fieldName());
    for (int i = 1; i < headers.size() && !present(lines); i++) {
      header = headers.get(i);
      lines = request.headers(header.fieldName());
    }
    for (Optional<byte[]> hop : ForwardedChain.hops(header, lines, maxHops, maxHeaderLength)) {
      if (hop.isEmpty()) {
        return Optional.of(client);
      }
      client = hop.get();
      if (!isTrusted(client)) {
        return Optional.of(client);
      }
    }
    return Optional.of(client);
  }

  /** Whether a header's field lines say anything: one that is absent or blank is no hop at all. */
  private static boolean present(List<String> lines) {
    for (String line : lines) {
      if (line != null && !line.isBlank()) {
        return true;
      }
    }
    return false;
  }

  private boolean isTrusted(byte[] address) {
    for (CidrRange range : trusted) {
      if (range.contains(address)) {
        return true;
      }
    }
    return false;
  }

  /** The trusted proxy ranges. */
  public List<CidrRange> trustedProxies() {
    return trusted;
  }

  /** The header read from trusted proxies: the preferred one when several are read. */
  public ForwardedHeader header() {
    return headers.get(0);
  }

  /** The headers read from trusted proxies, in order of preference (see {@link Builder#headers}). */
  public List<ForwardedHeader> headers() {
    return headers;
  }

  /** The prefix length IPv6 clients are partitioned by. */
  public int ipv6PrefixLength() {
    return ipv6PrefixLength;
  }

  @Override
  public String toString() {
    return "ClientAddressResolver{trusted=" + trusted + ", headers="
        + headers.stream().map(ForwardedHeader::fieldName).toList() + "}";
  }

  /** Builds a {@link ClientAddressResolver}. */
  public static final class Builder {
    private final List<CidrRange> trusted = new ArrayList<>();
    private List<ForwardedHeader> headers = List.of(ForwardedHeader.X_FORWARDED_FOR);
    private int maxHops = DEFAULT_MAX_HOPS;
    private int maxHeaderLength = DEFAULT_MAX_HEADER_LENGTH;
    private int ipv6PrefixLength = DEFAULT_IPV6_PREFIX_LENGTH;

    private Builder() {}

    /**
     * Adds a trusted proxy range in CIDR notation ({@code 10.0.0.0/8}, {@code fd00::/8}) or a bare
     * address.
     *
     * @throws IllegalArgumentException naming the value when it is not a CIDR range
     */
    public Builder trustedProxy(String cidr) {
      trusted.add(CidrRange.parse(cidr));
      return this;
    }

    /** Adds each range, as {@link #trustedProxy(String)}. */
    public Builder trustedProxies(Iterable<String> cidrs) {
      for (String cidr : cidrs) {
        trustedProxy(cidr);
      }
      return this;
    }

    /**
     * The header trusted proxies write, the other being ignored; defaults to
     * {@link ForwardedHeader#X_FORWARDED_FOR}.
     */
    public Builder header(ForwardedHeader header) {
      this.headers = List.of(Objects.requireNonNull(header, "header"));
      return this;
    }

    /**
     * Headers trusted proxies may write, in order of preference: a request's client is read from
     * the first of them it carries (with a non-blank field line), the rest being ignored.
     * {@code headers(List.of(FORWARDED, X_FORWARDED_FOR))} believes either, {@code Forwarded}
     * winning when both came (RFC 7239 section 7.4). Believing more than one header assumes that
     * the trusted proxies write, or strip, each of them: a client's own {@code Forwarded} passed
     * through untouched by a proxy that writes only {@code X-Forwarded-For} would be believed.
     *
     * @throws IllegalArgumentException when the list is empty or names a header twice
     */
    public Builder headers(List<ForwardedHeader> inOrderOfPreference) {
      List<ForwardedHeader> h = List.copyOf(inOrderOfPreference);
      if (h.isEmpty() || new HashSet<>(h).size() != h.size()) {
        throw new IllegalArgumentException("headers: expected one or more distinct forwarding headers, got " + h);
      }
      this.headers = h;
      return this;
    }

    /** Most hops read from the header, 1 to 64; defaults to {@value #DEFAULT_MAX_HOPS}. */
    public Builder maxHops(int maxHops) {
      if (maxHops < 1 || maxHops > 64) {
        throw new IllegalArgumentException("maxHops: expected 1 to 64, got " + maxHops);
      }
      this.maxHops = maxHops;
      return this;
    }

    /**
     * Most header characters scanned, from the right, 64 to 65536; defaults to
     * {@value #DEFAULT_MAX_HEADER_LENGTH}.
     */
    public Builder maxHeaderLength(int maxHeaderLength) {
      if (maxHeaderLength < 64 || maxHeaderLength > 65536) {
        throw new IllegalArgumentException("maxHeaderLength: expected 64 to 65536 characters, got " + maxHeaderLength);
      }
      this.maxHeaderLength = maxHeaderLength;
      return this;
    }

    /**
     * The prefix IPv6 clients are partitioned by, 32 to 128; defaults to
     * {@value #DEFAULT_IPV6_PREFIX_LENGTH}. IPv4 clients are always partitioned per address.
     */
    public Builder ipv6PrefixLength(int ipv6PrefixLength) {
      if (ipv6PrefixLength < 32 || ipv6PrefixLength > 128) {
        throw new IllegalArgumentException("ipv6PrefixLength: expected 32 to 128, got " + ipv6PrefixLength);
      }
      this.ipv6PrefixLength = ipv6PrefixLength;
      return this;
    }

    /** The resolver. */
    public ClientAddressResolver build() {
      return new ClientAddressResolver(this);
    }
  }
}
