package dev.headroom.gateway.internal;

import java.util.List;

/**
 * The header dialect names a route may choose. The dialects themselves (emit and parse) are
 * headroom-http's; this class only lists their configuration names until that module exposes them.
 */
final class Dialects {
  static final String DEFAULT = "ietf";

  private Dialects() {}

  static List<String> names() {
    return List.of("ietf", "draft-07", "draft-03", "x-ratelimit");
  }
}
