package dev.headroom.vend.format;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A valid vend request envelope (vend-notes.md, "Envelope"), as {@link VendRequestReader} reads
 * it: {@code protocol}, {@code id}, {@code call} ({@code function}, {@code version},
 * {@code arguments}), {@code context} and {@code extensions}.
 *
 * <p>Immutable: the JSON objects it holds are returned as copies.
 */
public final class VendRequest {

  /** One entry of the request's {@code extensions} array: {@code {urn, options}}. */
  public static final class Extension {
    private final String urn;
    private final ObjectNode options;

    Extension(String urn, ObjectNode options) {
      this.urn = urn;
      this.options = options;
    }

    public String urn() {
      return urn;
    }

    /** A copy of {@code options}; an empty object when the request gave none. */
    public ObjectNode options() {
      return options.deepCopy();
    }

    @Override
    public String toString() {
      return urn + options;
    }
  }

  private final String protocolVersion;
  private final String id;
  private final String function;
  private final String functionVersion;
  private final ObjectNode arguments;
  private final ObjectNode context;
  private final String caller;
  private final List<Extension> extensions;
  private final Scope requestedScope;

  VendRequest(String protocolVersion, String id, String function, String functionVersion,
      ObjectNode arguments, ObjectNode context, String caller, List<Extension> extensions,
      Scope requestedScope) {
    this.protocolVersion = protocolVersion;
    this.id = id;
    this.function = function;
    this.functionVersion = functionVersion;
    this.arguments = arguments;
    this.context = context;
    this.caller = caller;
    this.extensions = List.copyOf(extensions);
    this.requestedScope = requestedScope;
  }

  /** {@code protocol.version}, such as {@code 0.1.0}; responses echo it. */
  public String protocolVersion() {
    return protocolVersion;
  }

  /** {@code id}: a non-empty string, echoed in the response. */
  public String id() {
    return id;
  }

  /** {@code call.function}, in {@code <service>.<action>} dot form. */
  public String function() {
    return function;
  }

  /** {@code call.version}, when given. */
  public Optional<String> functionVersion() {
    return Optional.ofNullable(functionVersion);
  }

  /** A copy of {@code call.arguments}; an empty object when absent. */
  public ObjectNode arguments() {
    return arguments.deepCopy();
  }

  /** A copy of {@code context}; an empty object when absent. */
  public ObjectNode context() {
    return context.deepCopy();
  }

  /** {@code context.caller}: the calling service, when the envelope names it. */
  public Optional<String> caller() {
    return Optional.ofNullable(caller);
  }

  /** The declared extensions, in request order. */
  public List<Extension> extensions() {
    return extensions;
  }

  /** Whether the request declares the extension with this URN. */
  public boolean declares(String urn) {
    for (Extension e : extensions) {
      if (e.urn.equals(urn)) {
        return true;
      }
    }
    return false;
  }

  /** Whether the request declares {@link RateLimitExtension#URN}: only then is data returned. */
  public boolean declaresRateLimit() {
    return declares(RateLimitExtension.URN);
  }

  /**
   * The rate-limit extension's {@code options.scope} (seed 003, "Options (Request)"), when the
   * request asks for one scope only.
   */
  public Optional<Scope> requestedScope() {
    return Optional.ofNullable(requestedScope);
  }

  /** Whether this calls the reserved {@code vend.capabilities} function. */
  public boolean isCapabilities() {
    return RateLimitExtension.CAPABILITIES_FUNCTION.equals(function);
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof VendRequest)) {
      return false;
    }
    VendRequest r = (VendRequest) o;
    return id.equals(r.id) && function.equals(r.function) && protocolVersion.equals(r.protocolVersion)
        && Objects.equals(functionVersion, r.functionVersion) && arguments.equals(r.arguments)
        && context.equals(r.context) && extensions.toString().equals(r.extensions.toString());
  }

  @Override
  public int hashCode() {
    return Objects.hash(id, function, protocolVersion);
  }

  @Override
  public String toString() {
    return "VendRequest{id=" + id + ", function=" + function
        + (caller == null ? "" : ", caller=" + caller) + ", extensions=" + extensions.size() + "}";
  }
}
