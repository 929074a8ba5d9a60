package dev.headroom.http.discovery;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.http.body.LimitType;
import dev.headroom.http.body.PolicyTexts;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * The Graceful Boundaries limits discovery document (spec section 1), served at
 * {@code /api/limits} and {@code /.well-known/limits}, built from the routes and their
 * policies so that it cannot drift from what is enforced.
 *
 * <h2>How each limit entry is made</h2>
 *
 * <p>For every policy of every listed route: {@code type} is {@link LimitType#classify} (or the
 * type the operator set in the policy's texts); {@code limitId} the policy name (or the configured
 * id); {@code scope} who the partitioning tells apart; {@code maxRequests} the quota {@code q};
 * {@code windowSeconds} the window {@code w}; {@code costMetric} {@code bytes} for content-bytes
 * policies; {@code description} the texts' description. When a route has several policies each
 * entry also carries {@code limitType}, as the spec asks when limits interact.
 *
 * <h2>The conformance level is computed, not claimed</h2>
 *
 * <ul>
 *   <li>{@code not-applicable} when no route is listed;
 *   <li>otherwise at least {@code level-2}: Headroom's refusals carry {@code error}, {@code detail},
 *       {@code why}, {@code limit} and {@code retryAfterSeconds} by construction (level 1), and
 *       this document exists (level 2);
 *   <li>{@code level-3} when every published policy's texts offer constructive guidance (a cached
 *       result, an alternative endpoint or an upgrade; CONFORMANCE.md level 3);
 *   <li>{@code level-4} when, in addition, the host says successful responses carry RateLimit
 *       headers ({@link Builder#proactiveHeaders(boolean)}).
 * </ul>
 *
 * <p>The JSON is deterministic (routes in the order given), so {@link #etag()} is stable across
 * restarts and nodes. Immutable and thread-safe.
 */
public final class LimitsDiscoveryDocument {

  private static final JsonFactory JSON = new JsonFactory();

  private final String service;
  private final String description;
  private final ConformanceLevel conformance;
  private final String changelog;
  private final String feed;
  private final Map<String, String> extensions;
  private final List<DiscoveryRoute> routes;
  private final Function<QuotaPolicy, PolicyTexts> texts;
  private final byte[] json;
  private final String etag;

  private LimitsDiscoveryDocument(Builder b, List<DiscoveryRoute> listed, ConformanceLevel conformance) {
    this.service = b.service;
    this.description = b.description;
    this.changelog = b.changelog;
    this.feed = b.feed;
    this.extensions = Collections.unmodifiableMap(new LinkedHashMap<>(b.extensions));
    this.routes = List.copyOf(listed);
    this.texts = b.texts;
    this.conformance = conformance;
    this.json = render();
    this.etag = EntityTag.strong(json);
  }

  /** Starts a document for a service: its name and what it does. */
  public static Builder builder(String service, String description) {
    return new Builder(service, description);
  }

  /** The computed conformance level. */
  public ConformanceLevel conformance() {
    return conformance;
  }

  /** The routes published, in order. */
  public List<DiscoveryRoute> routes() {
    return routes;
  }

  /** The JSON, UTF-8; send as {@code application/json}. */
  public byte[] toJsonBytes() {
    return json.clone();
  }

  /** The JSON text. */
  public String toJson() {
    return new String(json, StandardCharsets.UTF_8);
  }

  /** The strong entity tag of {@link #toJsonBytes()}, quoted, for the {@code ETag} header. */
  public String etag() {
    return etag;
  }

  /** The recommended {@code Cache-Control} (spec section 1: s-maxage of at least 300 seconds). */
  public static String cacheControl() {
    return "public, max-age=300, s-maxage=3600";
  }

  private byte[] render() {
    ByteArrayOutputStream out = new ByteArrayOutputStream(1024);
    try (JsonGenerator g = JSON.createGenerator(out)) {
      g.writeStartObject();
      g.writeStringField("service", service);
      g.writeStringField("description", description);
      g.writeStringField("conformance", conformance.token());
      if (changelog != null) {
        g.writeStringField("changelog", changelog);
      }
      if (feed != null) {
        g.writeStringField("feed", feed);
      }
      if (!extensions.isEmpty()) {
        g.writeObjectFieldStart("extensions");
        for (Map.Entry<String, String> e : extensions.entrySet()) {
          g.writeStringField(e.getKey(), e.getValue());
        }
        g.writeEndObject();
      }
      g.writeObjectFieldStart("limits");
      for (DiscoveryRoute r : routes) {
        g.writeObjectFieldStart(r.key());
        g.writeStringField("endpoint", r.path());
        g.writeStringField("method", r.method());
        g.writeArrayFieldStart("limits");
        for (QuotaPolicy p : r.policies()) {
          PolicyTexts t = texts.apply(p);
          LimitType type = t.limitType(p);
          g.writeStartObject();
          g.writeStringField("type", type.token());
          g.writeStringField("limitId", t.limitId(p));
          if (r.policies().size() > 1) {
            g.writeStringField("limitType", type.token());
          }
          g.writeStringField("scope", LimitType.scope(p).token());
          g.writeNumberField("maxRequests", p.quota());
          g.writeNumberField("windowSeconds", p.windowSeconds());
          if (p.unit() == QuotaUnit.CONTENT_BYTES) {
            g.writeStringField("costMetric", "bytes");
          }
          g.writeStringField("description", t.description(p));
          g.writeEndObject();
        }
        g.writeEndArray();
        if (r.note().isPresent()) {
          g.writeStringField("note", r.note().get());
        }
        g.writeEndObject();
      }
      g.writeEndObject();
      g.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException("writing to memory cannot fail", e);
    }
    return out.toByteArray();
  }

  @Override
  public String toString() {
    return toJson();
  }

  /** Builds a {@link LimitsDiscoveryDocument}. Not thread-safe. */
  public static final class Builder {
    private final String service;
    private final String description;
    private String changelog;
    private String feed;
    private final Map<String, String> extensions = new LinkedHashMap<>();
    private final List<DiscoveryRoute> routes = new ArrayList<>();
    private Function<QuotaPolicy, PolicyTexts> texts;
    private boolean proactiveHeaders;
    private URI origin;

    private Builder(String service, String description) {
      this.service = service;
      this.description = description;
    }

    /** A route; unlisted routes are accepted and left out. */
    public Builder route(DiscoveryRoute route) {
      routes.add(Objects.requireNonNull(route, "route"));
      return this;
    }

    /**
     * Required: the texts of each policy, for descriptions, ids, types and guidance; typically
     * {@code limitRefusals::texts}, so that refusals and discovery say the same.
     */
    public Builder texts(Function<QuotaPolicy, PolicyTexts> texts) {
      this.texts = texts;
      return this;
    }

    /** Whether successful responses carry RateLimit headers (for level 4). */
    public Builder proactiveHeaders(boolean proactiveHeaders) {
      this.proactiveHeaders = proactiveHeaders;
      return this;
    }

    /** The service's origin, against which absolute changelog, feed and extension URLs are checked. */
    public Builder origin(URI origin) {
      this.origin = origin;
      return this;
    }

    /** URL of a changelog of limit changes: relative or same-origin. */
    public Builder changelog(String url) {
      this.changelog = url;
      return this;
    }

    /** URL of a feed of limit changes: relative or same-origin. */
    public Builder feed(String url) {
      this.feed = url;
      return this;
    }

    /** A named extension document, such as {@code actionBoundaries}: relative or same-origin. */
    public Builder extension(String name, String url) {
      extensions.put(name, url);
      return this;
    }

    /**
     * Validates and builds.
     *
     * @throws IllegalArgumentException naming the field, the value and what is expected
     */
    public LimitsDiscoveryDocument build() {
      text("service", service, 200);
      text("description", description, 1000);
      if (texts == null) {
        throw new IllegalArgumentException("texts: required, the texts of each policy (e.g. limitRefusals::texts); got nothing");
      }
      sameOrigin("changelog", changelog);
      sameOrigin("feed", feed);
      for (Map.Entry<String, String> e : extensions.entrySet()) {
        if (e.getKey() == null || !e.getKey().matches("[A-Za-z][A-Za-z0-9_-]{0,63}")) {
          throw new IllegalArgumentException("extensions: expected names of letters, digits, - and _ (at most 64), got '"
              + e.getKey() + "'");
        }
        sameOrigin("extensions." + e.getKey(), e.getValue());
      }
      List<DiscoveryRoute> listed = new ArrayList<>();
      Map<String, DiscoveryRoute> keys = new LinkedHashMap<>();
      boolean constructive = true;
      for (DiscoveryRoute r : routes) {
        if (!r.listed()) {
          continue;
        }
        DiscoveryRoute clash = keys.putIfAbsent(r.key(), r);
        if (clash != null) {
          throw new IllegalArgumentException("route " + r.method() + " " + r.path() + ": key '" + r.key()
              + "' is already used by " + clash.method() + " " + clash.path() + "; expected unique endpoint keys");
        }
        for (QuotaPolicy p : r.policies()) {
          PolicyTexts t = texts.apply(p);
          if (t == null) {
            throw new IllegalArgumentException("texts: no texts for policy '" + p.name() + "' of route " + r.key());
          }
          t.limitType(p); // fails here, naming the policy, when its partitioning cannot be read
          constructive &= t.isConstructive();
        }
        listed.add(r);
      }
      ConformanceLevel level;
      if (listed.isEmpty()) {
        level = ConformanceLevel.NOT_APPLICABLE;
      } else if (!constructive) {
        level = ConformanceLevel.LEVEL_2;
      } else {
        level = proactiveHeaders ? ConformanceLevel.LEVEL_4 : ConformanceLevel.LEVEL_3;
      }
      return new LimitsDiscoveryDocument(this, listed, level);
    }

    private static void text(String field, String value, int max) {
      if (value == null || value.isBlank() || value.length() > max || value.chars().anyMatch(c -> c < 0x20)) {
        throw new IllegalArgumentException(field + ": expected 1 to " + max + " characters of text, got "
            + (value == null ? "nothing" : "'" + value + "'"));
      }
    }

    private void sameOrigin(String field, String url) {
      if (url == null) {
        return;
      }
      String expected = field + ": expected a relative path or a same-origin absolute URL (Graceful Boundaries SC-6), got '"
          + (url.length() > 80 ? url.substring(0, 80) + "..." : url) + "'";
      if (url.isEmpty() || url.length() > 2048 || url.startsWith("//") || url.chars().anyMatch(c -> c <= 0x20 || c >= 0x7f || c == '\\')) {
        throw new IllegalArgumentException(expected);
      }
      URI u;
      try {
        u = new URI(url);
      } catch (URISyntaxException e) {
        throw new IllegalArgumentException(expected, e);
      }
      if (u.getScheme() == null) {
        return;
      }
      boolean same = origin != null && u.getHost() != null && origin.getHost() != null
          && u.getScheme().equalsIgnoreCase(origin.getScheme()) && u.getHost().equalsIgnoreCase(origin.getHost())
          && port(u) == port(origin);
      if (!same) {
        throw new IllegalArgumentException(expected + (origin == null ? " with no origin configured" : " for origin " + origin));
      }
    }

    private static int port(URI u) {
      return u.getPort() >= 0 ? u.getPort() : u.getScheme().toLowerCase(Locale.ROOT).equals("https") ? 443 : 80;
    }
  }

  /** The document's changelog URL. */
  public Optional<String> changelog() {
    return Optional.ofNullable(changelog);
  }

  /** The document's feed URL. */
  public Optional<String> feed() {
    return Optional.ofNullable(feed);
  }

  /** The document's extension URLs. */
  public Map<String, String> extensions() {
    return extensions;
  }
}
