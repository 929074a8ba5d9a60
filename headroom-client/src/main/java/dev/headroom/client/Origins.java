package dev.headroom.client;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;
import java.util.Optional;

/** RFC 6454 origins of URIs: scheme, host and port, with default ports made explicit. */
final class Origins {

  private Origins() {}

  /** {@code scheme://host:port}, lower case. */
  static String of(URI uri) {
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    String host = uri.getHost() == null ? "" : uri.getHost().toLowerCase(Locale.ROOT);
    return scheme + "://" + host + ":" + port(uri);
  }

  static int port(URI uri) {
    if (uri.getPort() >= 0) {
      return uri.getPort();
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    return scheme.equals("https") ? 443 : scheme.equals("http") ? 80 : -1;
  }

  /**
   * A guidance URL resolved against the request it answers, when it is relative or same-origin
   * (Graceful Boundaries SC-6: machine-actionable guidance never points elsewhere).
   */
  static Optional<URI> sameOriginTarget(URI base, String reference) {
    if (reference == null || reference.isBlank() || reference.length() > 2048) {
      return Optional.empty();
    }
    try {
      URI ref = new URI(reference.strip());
      if (!ref.isAbsolute() && reference.strip().startsWith("//")) {
        return Optional.empty();
      }
      URI resolved = base.resolve(ref);
      if (resolved.getHost() == null || !of(resolved).equals(of(base))) {
        return Optional.empty();
      }
      return Optional.of(resolved);
    } catch (URISyntaxException | IllegalArgumentException e) {
      return Optional.empty();
    }
  }
}
