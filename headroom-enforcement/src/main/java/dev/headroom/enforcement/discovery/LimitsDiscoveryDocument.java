package dev.headroom.enforcement.discovery;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.enforcement.plan.Plan;
import dev.headroom.enforcement.plan.Plans;
import dev.headroom.http.body.LimitScope;
import dev.headroom.http.body.LimitType;
import dev.headroom.http.body.PolicyTexts;
import java.io.ByteArrayOutputStream;
import java.math.BigDecimal;
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
 * policies; {@code description} the texts' description. An endpoint whose requests do not cost one unit
 * says what they cost ({@code cost}: {@code units}, {@code header}, {@code chargeHeader}, {@code max}). A route with adaptive
 * concurrency lists it last, a {@code concurrency} entry whose {@code maxRequests} is the limit
 * learnt when the document was built, with an {@code adaptive} member saying that it moves, within
 * which bounds, and each plan's share ({@link DiscoveryRoute.Adaptive}). When a route has several
 * limits each entry also carries {@code limitType}, as the spec asks when limits interact.
 *
 * <h2>The conformance level is computed, not claimed</h2>
 *
 * <ul>
 *   <li>{@code not-applicable} when no route is listed;
 *   <li>{@code none} when the host says some non-success responses of a listed route may go out
 *       without {@code error}, {@code detail} and {@code why} ({@link Builder#structuredErrors(boolean)}
 *       false: a gateway that relays an upstream's own error bodies unchanged cannot promise level 1);
 *   <li>otherwise at least {@code level-2}: Headroom's refusals carry {@code error}, {@code detail},
 *       {@code why}, {@code limit} and {@code retryAfterSeconds} by construction (level 1), and
 *       this document exists (level 2);
 *   <li>{@code level-3} when every published policy's texts offer constructive guidance (a cached
 *       result, an alternative endpoint or an upgrade; CONFORMANCE.md level 3);
 *   <li>{@code level-4} when, in addition, the host says successful responses carry RateLimit
 *       headers ({@link Builder#proactiveHeaders(boolean)}).
 * </ul>
 *
 * <p>An operator may declare another level ({@link Builder#declare(ConformanceLevel)}; Graceful
 * Boundaries "Self-Assertion and External Validation"): the document then carries the declared
 * level, {@link #computed()} keeps what the configuration delivers, and {@link #overclaims()} says
 * whether the claim is more than that, for the host to warn about.
 *
 * <p>The JSON is deterministic (routes in the order given), so {@link #etag()} is stable across
 * restarts and nodes. Immutable and thread-safe.
 */
public final class LimitsDiscoveryDocument {

  private static final JsonFactory JSON = new JsonFactory();

  private final String service;
  private final String description;
  private final ConformanceLevel conformance;
  private final ConformanceLevel computed;
  private final String shortfall;
  private final String changelog;
  private final String feed;
  private final Map<String, String> extensions;
  private final List<DiscoveryRoute> routes;
  private final Function<QuotaPolicy, PolicyTexts> texts;
  private final Plans plans;
  private final List<QuotaPolicy> planBases;
  private final byte[] json;
  private final String etag;

  private LimitsDiscoveryDocument(Builder b, List<DiscoveryRoute> listed, ConformanceLevel computed, String shortfall) {
    this.shortfall = shortfall;
    this.service = b.service;
    this.description = b.description;
    this.changelog = b.changelog;
    this.feed = b.feed;
    this.extensions = Collections.unmodifiableMap(new LinkedHashMap<>(b.extensions));
    this.routes = List.copyOf(listed);
    this.texts = b.texts;
    this.plans = b.plans;
    this.planBases = b.planBases;
    this.computed = computed;
    this.conformance = b.declared != null ? b.declared : computed;
    this.json = render();
    this.etag = EntityTag.strong(json);
  }

  /** Starts a document for a service: its name and what it does. */
  public static Builder builder(String service, String description) {
    return new Builder(service, description);
  }

  /** The conformance level the document carries: the declared one if any, else {@link #computed()}. */
  public ConformanceLevel conformance() {
    return conformance;
  }

  /** The conformance level the configuration delivers, computed from the routes, texts and host facts. */
  public ConformanceLevel computed() {
    return computed;
  }

  /** What keeps {@link #computed()} from the next level, in words; empty at level 4 or not-applicable. */
  public Optional<String> shortfall() {
    return Optional.ofNullable(shortfall);
  }

  /** Whether the declared level is more than the configuration delivers ({@code not-applicable} ranks lowest). */
  public boolean overclaims() {
    return conformance.compareTo(computed) > 0;
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
          if (r.policies().size() + (r.adaptive().isPresent() ? 1 : 0) > 1) {
            g.writeStringField("limitType", type.token());
          }
          g.writeStringField("scope", LimitScope.of(p).token());
          g.writeNumberField("maxRequests", p.quota());
          g.writeNumberField("windowSeconds", p.windowSeconds());
          if (p.unit() == QuotaUnit.CONTENT_BYTES) {
            g.writeStringField("costMetric", "bytes");
          }
          g.writeStringField("description", t.description(p));
          g.writeEndObject();
        }
        if (r.adaptive().isPresent()) {
          writeAdaptive(g, r.adaptive().get(), !r.policies().isEmpty());
        }
        g.writeEndArray();
        if (r.note().isPresent()) {
          g.writeStringField("note", r.note().get());
        }
        if (r.cost().isPresent()) {
          DiscoveryRoute.Cost c = r.cost().get();
          g.writeObjectFieldStart("cost");
          g.writeNumberField("units", c.units());
          if (c.header().isPresent()) {
            g.writeStringField("header", c.header().get());
          }
          if (c.chargeHeader().isPresent()) {
            g.writeStringField("chargeHeader", c.chargeHeader().get());
          }
          if (c.header().isPresent() || c.chargeHeader().isPresent()) {
            g.writeNumberField("max", c.max());
          }
          g.writeEndObject();
        }
        g.writeEndObject();
      }
      g.writeEndObject();
      if (plans != null) {
        writePlans(g);
      }
      g.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException("writing to memory cannot fail", e);
    }
    return out.toByteArray();
  }

  /**
   * A route's adaptive concurrency as one more entry of its {@code limits}: type
   * {@code concurrency}, scope {@code global}, {@code maxRequests} the limit when the document was
   * built, {@code windowSeconds} the {@code w} its RateLimit-Policy item carries, and an
   * {@code adaptive} member (Graceful Boundaries allows members of its own) saying that it is
   * learnt ({@code learnt: true}), the bounds it moves within, the policy name to read in
   * RateLimit-Policy for its value now, and each plan's guaranteed share ({@code shares}) if any.
   */
  private static void writeAdaptive(JsonGenerator g, DiscoveryRoute.Adaptive a, boolean withOthers) throws IOException {
    g.writeStartObject();
    g.writeStringField("type", LimitType.CONCURRENCY.token());
    g.writeStringField("limitId", a.name());
    if (withOthers) {
      g.writeStringField("limitType", LimitType.CONCURRENCY.token());
    }
    g.writeStringField("scope", LimitScope.GLOBAL.token());
    g.writeNumberField("maxRequests", a.limit());
    g.writeNumberField("windowSeconds", 1);
    g.writeObjectFieldStart("adaptive");
    g.writeBooleanField("learnt", true);
    g.writeStringField("policy", a.name());
    g.writeNumberField("minLimit", a.minLimit());
    g.writeNumberField("maxLimit", a.maxLimit());
    if (!a.shares().isEmpty()) {
      g.writeObjectFieldStart("shares");
      for (Map.Entry<String, Double> e : a.shares().entrySet()) {
        g.writeNumberField(e.getKey(), e.getValue());
      }
      g.writeEndObject();
    }
    g.writeEndObject();
    g.writeStringField("description", "At most " + a.limit() + " requests in flight at once now, across all callers. "
        + "The limit is learnt from the service's latency and failures and moves between " + a.minLimit() + " and "
        + a.maxLimit() + ": the " + a.name() + " item of RateLimit-Policy on each response carries its value then, "
        + "and a request beyond it is refused 503 with Retry-After."
        + (a.shares().isEmpty() ? "" : " Under overload each plan keeps its share of it (" + percentages(a.shares())
            + ") and may use what the others leave idle."));
    g.writeEndObject();
  }

  /** Shares as people read them: {@code free 20%, pro 80%}. */
  private static String percentages(Map<String, Double> shares) {
    List<String> out = new ArrayList<>();
    shares.forEach((plan, share) -> out.add(plan + " " + BigDecimal.valueOf(share).movePointRight(2).stripTrailingZeros()
        .toPlainString() + "%"));
    return String.join(", ", out);
  }

  /** {@code fallbackPlan} and {@code plans}: each plan's page and limits, smallest plan first. */
  private void writePlans(JsonGenerator g) throws IOException {
    g.writeStringField("fallbackPlan", plans.fallback().name());
    g.writeArrayFieldStart("plans");
    for (Plan plan : plans.plans()) {
      g.writeStartObject();
      g.writeStringField("name", plan.name());
      if (plan.url().isPresent()) {
        g.writeStringField("url", plan.url().get());
      }
      g.writeArrayFieldStart("limits");
      for (QuotaPolicy base : planBases) {
        QuotaPolicy p = plans.policy(plan, base);
        g.writeStartObject();
        g.writeStringField("limitId", texts.apply(base).limitId(base));
        g.writeStringField("policy", p.name());
        g.writeNumberField("maxRequests", p.quota());
        g.writeNumberField("windowSeconds", p.windowSeconds());
        g.writeStringField("algorithm", p.algorithm().token());
        if (p.unit() == QuotaUnit.CONTENT_BYTES) {
          g.writeStringField("costMetric", "bytes");
        }
        g.writeEndObject();
      }
      g.writeEndArray();
      g.writeEndObject();
    }
    g.writeEndArray();
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
    private boolean structuredErrors = true;
    private ConformanceLevel declared;
    private URI origin;
    private Plans plans;
    private List<QuotaPolicy> planBases = List.of();

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

    /**
     * The service's plans: the document gets a {@code plans} member listing, for each plan in
     * order, its page ({@code url}) and the limits of the given base policies as the plan enforces
     * them, and {@code fallbackPlan}, the plan of a caller the service cannot identify (whose
     * limits the routes' entries should show). Graceful Boundaries allows members of its own
     * (its schema's {@code additionalProperties}).
     */
    public Builder plans(Plans plans, List<QuotaPolicy> bases) {
      this.plans = Objects.requireNonNull(plans, "plans");
      this.planBases = List.copyOf(bases);
      return this;
    }

    /**
     * Whether every non-success response of the listed routes carries {@code error}, {@code detail}
     * and {@code why} (Graceful Boundaries section 6, level 1); true by default, as every
     * response Headroom writes itself does. False when responses of a listed route's own service
     * go out unchanged (a gateway route that does not normalise its upstream's errors).
     */
    public Builder structuredErrors(boolean structuredErrors) {
      this.structuredErrors = structuredErrors;
      return this;
    }

    /**
     * The level the operator declares instead of the computed one; null (the default) to publish
     * the computed level. A declaration above the computed level is allowed (the operator may know
     * better, for instance that an upstream's own errors are structured) and reported by
     * {@link LimitsDiscoveryDocument#overclaims()}.
     */
    public Builder declare(ConformanceLevel level) {
      this.declared = level;
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
      if (plans != null) {
        for (Plan plan : plans.plans()) {
          sameOrigin("plans." + plan.name() + ".url", plan.url().orElse(null));
        }
      }
      for (Map.Entry<String, String> e : extensions.entrySet()) {
        if (e.getKey() == null || !e.getKey().matches("[A-Za-z][A-Za-z0-9_-]{0,63}")) {
          throw new IllegalArgumentException("extensions: expected names of letters, digits, - and _ (at most 64), got '"
              + e.getKey() + "'");
        }
        sameOrigin("extensions." + e.getKey(), e.getValue());
      }
      List<DiscoveryRoute> listed = new ArrayList<>();
      Map<String, DiscoveryRoute> keys = new LinkedHashMap<>();
      String unguided = null;
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
          if (!t.isConstructive() && unguided == null) {
            unguided = "policy '" + p.name() + "' of " + r.method() + " " + r.path()
                + " offers no cachedResultUrl, alternativeEndpoint or upgradeUrl";
          }
        }
        listed.add(r);
      }
      ConformanceLevel level;
      String shortfall = null;
      if (listed.isEmpty()) {
        level = ConformanceLevel.NOT_APPLICABLE;
      } else if (!structuredErrors) {
        level = ConformanceLevel.NONE;
        shortfall = "some non-success responses may lack error, detail and why (level 1)";
      } else if (unguided != null) {
        level = ConformanceLevel.LEVEL_2;
        shortfall = unguided + " (level 3)";
      } else if (!proactiveHeaders) {
        level = ConformanceLevel.LEVEL_3;
        shortfall = "success responses carry no RateLimit fields (level 4)";
      } else {
        level = ConformanceLevel.LEVEL_4;
      }
      return new LimitsDiscoveryDocument(this, listed, level, shortfall);
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
