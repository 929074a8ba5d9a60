package dev.headroom.enforcement.partition;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What partition-key derivation may read of a request, without tying Headroom to a server type.
 * The host (gateway, servlet filter, Spring adapter) adapts its own request to this view.
 *
 * <p>Every value is untrusted input except {@link #user()}, which the host application supplies
 * after its own authentication. Derivations bound and validate what they read.
 *
 * <p>Implementations must be safe to read from the thread that handles the request.
 */
public interface RequestView {

  /**
   * The address of the direct peer (the TCP connection's remote address) as an IP literal, such
   * as {@code 203.0.113.7} or {@code 2001:db8::1}; empty when the transport has none (a Unix
   * socket, for example).
   */
  Optional<String> remoteAddress();

  /** The request method, such as {@code GET}. */
  String method();

  /** The request path, without the query. Attacker-controlled: never used as a key as is. */
  String path();

  /**
   * The route template the request matched, such as {@code /api/items/{id}}; empty when the host
   * matched no route. Unlike {@link #path()}, its cardinality is bounded by configuration.
   */
  Optional<String> route();

  /**
   * Every field line of the named header, in the order received; empty when absent. The name is
   * matched case-insensitively.
   */
  List<String> headers(String name);

  /** The authenticated user, as established by the host application; empty when anonymous. */
  Optional<String> user();

  /**
   * The subject of the certificate the client presented on its TLS connection, verified by the
   * host against its trusted CAs, in RFC 2253 form ({@code CN=alice,O=Example}); empty when the
   * connection is not TLS, no certificate was presented, or the host does not know (the default).
   * What the {@code client-cert} partitioning reads.
   */
  default Optional<String> clientCertificateSubject() {
    return Optional.empty();
  }

  /**
   * The keys derived from this request's connection peer alone, kept for the connection's life
   * ({@link PeerKeys}); {@link PeerKeys#NONE} (the default) for a host whose requests have no
   * lasting connection of their own.
   */
  default PeerKeys peerKeys() {
    return PeerKeys.NONE;
  }

  /** Starts an immutable view, for hosts without a request type of their own and for tests. */
  static Builder builder() {
    return new Builder();
  }

  /** Builds an immutable {@link RequestView}. */
  final class Builder {
    private String remoteAddress;
    private String method = "GET";
    private String path = "/";
    private String route;
    private String user;
    private String certificateSubject;
    private final Map<String, List<String>> headers = new LinkedHashMap<>();

    private Builder() {}

    /** The direct peer's IP literal. */
    public Builder remoteAddress(String remoteAddress) {
      this.remoteAddress = remoteAddress;
      return this;
    }

    /** The method; defaults to {@code GET}. */
    public Builder method(String method) {
      this.method = Objects.requireNonNull(method, "method");
      return this;
    }

    /** The path; defaults to {@code /}. */
    public Builder path(String path) {
      this.path = Objects.requireNonNull(path, "path");
      return this;
    }

    /** The matched route template. */
    public Builder route(String route) {
      this.route = route;
      return this;
    }

    /** The authenticated user. */
    public Builder user(String user) {
      this.user = user;
      return this;
    }

    /** The subject of the client's verified TLS certificate, RFC 2253 form. */
    public Builder clientCertificateSubject(String subject) {
      this.certificateSubject = subject;
      return this;
    }

    /** Adds one field line of a header. */
    public Builder header(String name, String value) {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(value, "value");
      headers.computeIfAbsent(name.toLowerCase(Locale.ROOT), k -> new ArrayList<>()).add(value);
      return this;
    }

    /** The view. */
    public RequestView build() {
      Map<String, List<String>> copy = new LinkedHashMap<>();
      headers.forEach((k, v) -> copy.put(k, List.copyOf(v)));
      return new SimpleRequestView(remoteAddress, method, path, route, user, certificateSubject,
          Collections.unmodifiableMap(copy));
    }
  }
}

/** The immutable view made by {@link RequestView.Builder}. */
final class SimpleRequestView implements RequestView {
  private final String remoteAddress;
  private final String method;
  private final String path;
  private final String route;
  private final String user;
  private final String certificateSubject;
  private final Map<String, List<String>> headers;

  SimpleRequestView(String remoteAddress, String method, String path, String route, String user,
      String certificateSubject, Map<String, List<String>> headers) {
    this.remoteAddress = remoteAddress;
    this.method = method;
    this.path = path;
    this.route = route;
    this.user = user;
    this.certificateSubject = certificateSubject;
    this.headers = headers;
  }

  @Override
  public Optional<String> remoteAddress() {
    return Optional.ofNullable(remoteAddress);
  }

  @Override
  public String method() {
    return method;
  }

  @Override
  public String path() {
    return path;
  }

  @Override
  public Optional<String> route() {
    return Optional.ofNullable(route);
  }

  @Override
  public List<String> headers(String name) {
    return headers.getOrDefault(name.toLowerCase(Locale.ROOT), List.of());
  }

  @Override
  public Optional<String> user() {
    return Optional.ofNullable(user);
  }

  @Override
  public Optional<String> clientCertificateSubject() {
    return Optional.ofNullable(certificateSubject);
  }

  @Override
  public String toString() {
    return method + " " + path + " from " + remoteAddress;
  }
}
