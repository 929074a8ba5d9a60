package dev.headroom.http.partition;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Finds the address of the client behind a request, honouring {@code Forwarded} (RFC 7239) or
 * {@code X-Forwarded-For} only when the direct peer is a trusted proxy.
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
  private final ForwardedHeader header;
  private final int maxHops;
  private final int maxHeaderLength;
  private final int ipv6PrefixLength;

  private ClientAddressResolver(Builder b) {
    this.trusted = List.copyOf(b.trusted);
    this.header = b.header;
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

  Optional<byte[]> resolveBytes(RequestView request) {
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
    Optional<byte[]> peer = IpLiteral.parse(peerText);
    if (peer.isEmpty() || !isTrusted(peer.get())) {
      return peer;
    }
    byte[] client = peer.get();
    List<String> lines = request.headers(header.fieldName());
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

  /** The header read from trusted proxies. */
  public ForwardedHeader header() {
    return header;
  }

  /** The prefix length IPv6 clients are partitioned by. */
  public int ipv6PrefixLength() {
    return ipv6PrefixLength;
  }

  @Override
  public String toString() {
    return "ClientAddressResolver{trusted=" + trusted + ", header=" + header.fieldName() + "}";
  }

  /** Builds a {@link ClientAddressResolver}. */
  public static final class Builder {
    private final List<CidrRange> trusted = new ArrayList<>();
    private ForwardedHeader header = ForwardedHeader.X_FORWARDED_FOR;
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

    /** The header trusted proxies write; defaults to {@link ForwardedHeader#X_FORWARDED_FOR}. */
    public Builder header(ForwardedHeader header) {
      this.header = Objects.requireNonNull(header, "header");
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
