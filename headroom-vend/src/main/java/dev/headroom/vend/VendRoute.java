package dev.headroom.vend;

import dev.headroom.http.headers.HeaderDialect;
import dev.headroom.http.path.PathTemplate;
import dev.headroom.vend.format.VendRequestReader;
import java.util.Collection;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * A vend route of an embedded filter, servlet or WebFlux (seed 003, the vend rate-limit extension),
 * as the gateway's {@code type: vend} routes: {@code POST}s to its path are vend calls, read whole
 * (bounded by the reader's {@code maxBytes}, 1 MiB by default), decided per vend scope by the
 * {@link VendRateLimiter} (headroom-vend) for the caller ({@code X-Vend-Caller}) and the user the
 * filter's user resolver names. A refused call is 429 {@code RATE_LIMITED} with
 * {@code Retry-After} equal to {@code details.retry_after.value}; an allowed one reaches the
 * application, whose response gets the RateLimit fields and, when the call declared
 * {@code urn:vnd:ext:rate-limit}, the extension data; {@code vend.capabilities} is answered by the
 * filter ({@link Builder#answerCapabilities}) or the application's answer merged with the limits.
 *
 * <p>The application's response to a vend call is buffered whole (the extension data goes into it),
 * so a vend route's handler answers synchronously. Vend routes are not listed in the discovery
 * document; {@code vend.capabilities} describes them. Immutable.
 */
public final class VendRoute {
  private final String template;
  private final PathTemplate path;
  private final VendRateLimiter limiter;
  private final VendRequestReader reader;
  private final boolean answerCapabilities;
  private final Set<HeaderDialect> dialects;

  private VendRoute(Builder b, PathTemplate path) {
    this.template = b.template;
    this.path = path;
    this.limiter = b.limiter;
    this.reader = b.reader;
    this.answerCapabilities = b.answerCapabilities;
    this.dialects = b.dialects == null ? null : Set.copyOf(b.dialects);
  }

  /** Starts a vend route on a path template, decided by {@code limiter}. */
  public static Builder builder(String template, VendRateLimiter limiter) {
    return new Builder(template, limiter);
  }

  /** The path template as given. */
  public String template() {
    return template;
  }

  /** The limiter that decides its calls. */
  public VendRateLimiter limiter() {
    return limiter;
  }

  /** The envelope reader (its bounds). */
  public VendRequestReader reader() {
    return reader;
  }

  /** Whether the filter answers {@code vend.capabilities} itself, rather than merging into the application's. */
  public boolean answersCapabilities() {
    return answerCapabilities;
  }

  /** The route's header dialects; the filter's when empty. */
  public Optional<Set<HeaderDialect>> dialects() {
    return Optional.ofNullable(dialects);
  }

  /** Whether a request is a call of this route: a POST whose decoded path the template matches. */
  public boolean matches(String method, String decodedPath) {
    return method.equals("POST") && path.matchesDecoded(decodedPath);
  }

  @Override
  public String toString() {
    return "vend POST " + template;
  }

  /** Builds a {@link VendRoute}. Not thread-safe. */
  public static final class Builder {
    private final String template;
    private final VendRateLimiter limiter;
    private VendRequestReader reader = VendRequestReader.standard();
    private boolean answerCapabilities;
    private Set<HeaderDialect> dialects;

    private Builder(String template, VendRateLimiter limiter) {
      this.template = template;
      this.limiter = Objects.requireNonNull(limiter, "limiter");
    }

    /** The envelope reader, for other bounds than {@link VendRequestReader#standard()}. */
    public Builder reader(VendRequestReader reader) {
      this.reader = Objects.requireNonNull(reader, "reader");
      return this;
    }

    /**
     * Answers {@code vend.capabilities} in the filter, without calling the application; off by
     * default: the application's answer is merged with the enforced limits, as the gateway's
     * {@code vend.capabilities: merge}.
     */
    public Builder answerCapabilities(boolean answer) {
      this.answerCapabilities = answer;
      return this;
    }

    /** The header dialects of the route's responses, overriding the filter's. */
    public Builder dialects(Collection<HeaderDialect> dialects) {
      if (dialects == null || dialects.isEmpty() || dialects.stream().anyMatch(Objects::isNull)) {
        throw new IllegalArgumentException("vend route " + template + ": dialects: expected at least one of "
            + HeaderDialect.NAMES + ", got " + dialects);
      }
      this.dialects = EnumSet.copyOf(dialects);
      return this;
    }

    /**
     * Validates and builds.
     *
     * @throws IllegalArgumentException naming the route and what is expected
     */
    public VendRoute build() {
      PathTemplate parsed;
      try {
        parsed = PathTemplate.parse(template);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("vend route " + template + ": " + e.getMessage(), e);
      }
      return new VendRoute(this, parsed);
    }
  }
}
