package dev.headroom.gateway.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import dev.headroom.Algorithm;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.gateway.ConfigException;
import dev.headroom.gateway.GatewayConfig;
import dev.headroom.gateway.GatewayConfig.Admin;
import dev.headroom.gateway.GatewayConfig.Escalation;
import dev.headroom.gateway.GatewayConfig.Limits;
import dev.headroom.gateway.GatewayConfig.Listen;
import dev.headroom.gateway.GatewayConfig.PkMode;
import dev.headroom.gateway.GatewayConfig.Vend;
import dev.headroom.redis.FailurePolicy;
import dev.headroom.redis.RedisStore;
import dev.headroom.vend.VendRateLimiter;
import dev.headroom.vend.format.VendRequestReader;
import dev.headroom.gateway.GatewayConfig.PkSettings;
import dev.headroom.gateway.GatewayConfig.Policy;
import dev.headroom.gateway.GatewayConfig.Route;
import dev.headroom.gateway.GatewayConfig.Service;
import dev.headroom.gateway.GatewayConfig.StoreSettings;
import dev.headroom.gateway.GatewayConfig.StoreType;
import dev.headroom.gateway.GatewayConfig.Timeouts;
import dev.headroom.gateway.GatewayConfig.Upstream;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.LimitType;
import dev.headroom.http.body.PolicyTexts;
import dev.headroom.http.discovery.DiscoveryRoute;
import dev.headroom.http.discovery.LimitsDocument;
import dev.headroom.http.headers.HeaderDialect;
import dev.headroom.http.headers.RateLimitHeaders;
import dev.headroom.http.partition.CidrRange;
import dev.headroom.http.partition.ClientAddressResolver;
import dev.headroom.http.partition.PartitionKeyDerivation;
import dev.headroom.http.PartitionKeyExposure;
import dev.headroom.http.partition.PartitionKeyExposures;
import dev.headroom.http.path.PathTemplate;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Function;
import java.net.URISyntaxException;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the YAML configuration as a tree ({@link ConfigSource}: bounded, no duplicate keys, no
 * aliases) and validates all of it before building anything, so that
 * a bad file is reported with every problem at once, each naming its YAML path, the value found and
 * what is expected. Jackson data binding stops at the first problem, which is why the tree is
 * walked by hand.
 *
 * <p>Not thread-safe; one instance per read.
 */
public final class ConfigReader {

  /** Methods a route may name. */
  static final Set<String> METHODS =
      Set.of("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS");

  /** Guidance fields of Graceful Boundaries section 3 a policy may carry. */
  static final Set<String> GUIDANCE =
      new LinkedHashSet<>(List.of("cachedResultUrl", "alternativeEndpoint", "upgradeUrl", "humanUrl"));

  /** Paths the gateway serves itself (Graceful Boundaries section 1). */
  static final Set<String> RESERVED_PATHS = Set.of("/.well-known/limits", "/api/limits");

  private static final Pattern SHORT_DURATION = Pattern.compile("(\\d{1,9})(ms|s|m|h|d)");

  /** The {@code why} of texts made for checks only; never sent. */
  static final String DEFAULT_WHY = "Limits keep the service available for everyone.";

  private final List<String> problems = new ArrayList<>();
  private final Function<String, String> env;
  private URI origin;

  private ConfigReader(Function<String, String> env) {
    this.env = env;
  }

  /** Parses and validates; see {@link GatewayConfig#parse(String, String)}. */
  public static GatewayConfig read(String yaml, String source) throws ConfigException {
    return read(yaml, source, System::getenv);
  }

  /** As {@link #read(String, String)}, with the environment variables {@code pk.keyEnv} may name. */
  public static GatewayConfig read(String yaml, String source, Function<String, String> env) throws ConfigException {
    ConfigReader reader = new ConfigReader(env);
    JsonNode root = ConfigSource.tree(yaml, source);
    if (root.isMissingNode() || root.isNull()) {
      throw new ConfigException(source, List.of("(root): the file is empty; expected a mapping with "
          + "service, upstreams, policies and routes"));
    }
    GatewayConfig config = reader.root(root, source, yaml);
    if (!reader.problems.isEmpty()) {
      throw new ConfigException(source, reader.problems);
    }
    return config;
  }

  private GatewayConfig root(JsonNode root, String source, String text) {
    if (!root.isObject()) {
      problem("(root)", root, "a mapping with service, upstreams, policies and routes");
      return null;
    }
    keys("", root, "service", "listen", "admin", "store", "trustedProxies", "limits", "timeouts",
        "upstreams", "policies", "routes", "pk");
    Service service = service(root.path("service"));
    origin = service == null ? null : service.origin().orElse(null);
    Listen listen = listen(root.path("listen"));
    Admin admin = admin(root.path("admin"));
    StoreSettings store = store(root.path("store"));
    List<String> trusted = trustedProxies(root.path("trustedProxies"));
    Limits limits = limits(root.path("limits"));
    Timeouts timeouts = timeouts(root.path("timeouts"));
    Map<String, Upstream> upstreams = upstreams(root.path("upstreams"));
    Map<String, Policy> policies = policies(root.path("policies"));
    List<Route> routes = routes(root.path("routes"), upstreams, policies);
    PkSettings pk = pk(root.path("pk"), routes);
    if (!problems.isEmpty()) {
      return null;
    }
    GatewayConfig config = new GatewayConfig(service, listen, admin, store, trusted, limits, timeouts,
        upstreams, policies, routes, pk, source, text);
    vocabulary(config);
    return problems.isEmpty() ? config : null;
  }

  /**
   * Builds what requests will use (header emitters, refusal texts, the discovery document) once
   * now, so that whatever headroom-http refuses in combination (a changelog on another origin, two
   * routes with one discovery key) is reported at load, never at the first request.
   */
  private void vocabulary(GatewayConfig config) {
    try {
      Speech.of(config, dev.headroom.Ticker.system()).discovery(Map.of(), Set.of());
    } catch (IllegalArgumentException e) {
      String m = e.getMessage();
      String where = m.startsWith("changelog:") ? "service.changelog"
          : m.startsWith("feed:") ? "service.feed"
          : m.startsWith("description:") ? "service.description"
          : m.startsWith("service:") ? "service.name"
          : m.startsWith("route ") ? "routes" : "(root)";
      problems.add(where + ": " + m);
    }
  }

  private Service service(JsonNode n) {
    if (n.isMissingNode()) {
      problem("service", n, "a mapping with name and description (the discovery document's service)");
      return null;
    }
    if (!object("service", n)) {
      return null;
    }
    keys("service", n, "name", "description", "changelog", "feed", "origin", "statusUrl");
    String name = requiredText("service.name", n.path("name"), "the service's name");
    String description = optionalText("service.description", n.path("description")).orElse("");
    Optional<String> changelog = optionalUrl("service.changelog", n.path("changelog"));
    Optional<String> feed = optionalUrl("service.feed", n.path("feed"));
    Optional<URI> origin = Optional.empty();
    Optional<String> originText = optionalText("service.origin", n.path("origin"));
    if (originText.isPresent()) {
      try {
        URI o = new URI(originText.get());
        // headroom-http decides what an origin is (scheme, host, optional port only)
        LimitRefusals.builder().ticker(dev.headroom.Ticker.system()).origin(o)
            .defaults(PolicyTexts.builder(DEFAULT_WHY).build()).build();
        origin = Optional.of(o);
      } catch (URISyntaxException | IllegalArgumentException e) {
        problem("service.origin", n.path("origin"), "the public origin callers reach the gateway at, "
            + "such as https://api.example.com (scheme, host and optional port only)");
      }
    }
    Optional<String> statusUrl = optionalUrl("service.statusUrl", n.path("statusUrl"));
    return new Service(name, description, changelog, feed, origin, statusUrl);
  }

  private Listen listen(JsonNode n) {
    if (n.isMissingNode()) {
      return new Listen("127.0.0.1", 8080);
    }
    if (!object("listen", n)) {
      return null;
    }
    keys("listen", n, "host", "port");
    String host = optionalText("listen.host", n.path("host")).orElse("127.0.0.1");
    int port = (int) integer("listen.port", n.path("port"), 8080, 0, 65535);
    return new Listen(host, port);
  }

  private Admin admin(JsonNode n) {
    if (n.isMissingNode()) {
      return new Admin(true, "127.0.0.1", 0);
    }
    if (!object("admin", n)) {
      return null;
    }
    keys("admin", n, "enabled", "host", "port");
    boolean enabled = bool("admin.enabled", n.path("enabled"), true);
    String host = optionalText("admin.host", n.path("host")).orElse("127.0.0.1");
    int port = (int) integer("admin.port", n.path("port"), 0, 0, 65535);
    return new Admin(enabled, host, port);
  }

  private StoreSettings store(JsonNode n) {
    if (n.isMissingNode()) {
      return new StoreSettings(StoreType.MEMORY, 1_000_000, Optional.empty(), Optional.empty(),
          FailurePolicy.FAIL_CLOSED, RedisStore.DEFAULT_DECISION_DEADLINE);
    }
    if (!object("store", n)) {
      return null;
    }
    keys("store", n, "type", "maxKeys", "uri", "keyPrefix", "failurePolicy", "decisionDeadline");
    String type = optionalText("store.type", n.path("type")).orElse("memory");
    StoreType storeType = null;
    switch (type) {
      case "memory" -> storeType = StoreType.MEMORY;
      case "redis" -> storeType = StoreType.REDIS;
      default -> problem("store.type", n.path("type"), "memory or redis");
    }
    long maxKeys = integer("store.maxKeys", n.path("maxKeys"), 1_000_000, 1, Long.MAX_VALUE);
    Optional<String> uri = optionalText("store.uri", n.path("uri"));
    Optional<String> keyPrefix = optionalText("store.keyPrefix", n.path("keyPrefix"));
    FailurePolicy failure = FailurePolicy.FAIL_CLOSED;
    Optional<String> failureText = optionalText("store.failurePolicy", n.path("failurePolicy"));
    if (failureText.isPresent()) {
      switch (failureText.get()) {
        case "fail-open" -> failure = FailurePolicy.FAIL_OPEN;
        case "fail-closed" -> failure = FailurePolicy.FAIL_CLOSED;
        case "fallback" -> failure = FailurePolicy.FALLBACK;
        default -> problem("store.failurePolicy", n.path("failurePolicy"),
            "fail-open (admit), fail-closed (503 temporary-reduced-capacity) or fallback (decide in memory)");
      }
    }
    Duration deadline = duration("store.decisionDeadline", n.path("decisionDeadline"),
        RedisStore.DEFAULT_DECISION_DEADLINE);
    if (storeType == StoreType.REDIS) {
      if (uri.isEmpty()) {
        problem("store.uri", n.path("uri"), "a redis:// URI when store.type is redis");
      }
      // headroom-redis checks its own settings; nothing connects here
      RedisStore.Builder b = RedisStore.builder();
      check("store.uri", () -> uri.ifPresent(b::uri));
      check("store.keyPrefix", () -> keyPrefix.ifPresent(b::keyPrefix));
      check("store.decisionDeadline", () -> b.decisionDeadline(deadline));
    } else {
      for (String k : List.of("uri", "keyPrefix", "failurePolicy", "decisionDeadline")) {
        if (!n.path(k).isMissingNode()) {
          problem("store." + k, n.path(k), "no " + k + " when store.type is memory");
        }
      }
    }
    return new StoreSettings(storeType, maxKeys, uri, keyPrefix, failure, deadline);
  }

  private void check(String path, Runnable r) {
    try {
      r.run();
    } catch (IllegalArgumentException e) {
      problems.add(path + ": " + e.getMessage());
    }
  }

  private List<String> trustedProxies(JsonNode n) {
    List<String> out = new ArrayList<>();
    if (n.isMissingNode()) {
      return out;
    }
    if (!n.isArray()) {
      problem("trustedProxies", n, "a list of IP addresses or CIDR blocks such as 10.0.0.0/8");
      return out;
    }
    for (int i = 0; i < n.size(); i++) {
      JsonNode e = n.get(i);
      String path = "trustedProxies[" + i + "]";
      if (!e.isTextual()) {
        problem(path, e, "an IP address or CIDR block such as 10.0.0.0/8 or ::1");
        continue;
      }
      try {
        CidrRange.parse(e.asText());
        out.add(e.asText());
      } catch (IllegalArgumentException ex) {
        problems.add(path + ": " + ex.getMessage());
      }
    }
    return out;
  }

  private Limits limits(JsonNode n) {
    if (n.isMissingNode()) {
      return new Limits(4096, 8192, 10L * 1024 * 1024);
    }
    if (!object("limits", n)) {
      return null;
    }
    keys("limits", n, "maxRequestLineBytes", "maxHeaderBytes", "maxBodyBytes");
    int line = (int) integer("limits.maxRequestLineBytes", n.path("maxRequestLineBytes"), 4096, 256, 1 << 20);
    int headers = (int) integer("limits.maxHeaderBytes", n.path("maxHeaderBytes"), 8192, 256, 1 << 20);
    long body = integer("limits.maxBodyBytes", n.path("maxBodyBytes"), 10L * 1024 * 1024, 0, Long.MAX_VALUE);
    return new Limits(line, headers, body);
  }

  private Timeouts timeouts(JsonNode n) {
    if (n.isMissingNode()) {
      return new Timeouts(Duration.ofSeconds(2), Duration.ofSeconds(30), Duration.ofSeconds(60));
    }
    if (!object("timeouts", n)) {
      return null;
    }
    keys("timeouts", n, "connect", "response", "idle");
    Duration connect = duration("timeouts.connect", n.path("connect"), Duration.ofSeconds(2));
    Duration response = duration("timeouts.response", n.path("response"), Duration.ofSeconds(30));
    Duration idle = duration("timeouts.idle", n.path("idle"), Duration.ofSeconds(60));
    return new Timeouts(connect, response, idle);
  }

  private Map<String, Upstream> upstreams(JsonNode n) {
    Map<String, Upstream> out = new LinkedHashMap<>();
    if (n.isMissingNode() || !n.isObject() || n.isEmpty()) {
      problem("upstreams", n, "a mapping of one or more upstream names to {url: http://host:port}");
      return out;
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      String path = "upstreams." + e.getKey();
      JsonNode u = e.getValue();
      if (!object(path, u)) {
        continue;
      }
      keys(path, u, "url", "demo", "maxConnections");
      boolean demo = bool(path + ".demo", u.path("demo"), false);
      int maxConnections = (int) integer(path + ".maxConnections", u.path("maxConnections"), 256, 1, 65536);
      String host = "127.0.0.1";
      int port = 0;
      if (demo) {
        if (!u.path("url").isMissingNode()) {
          problem(path + ".url", u.path("url"), "no url when demo is true (the demo upstream picks its own port)");
        }
      } else {
        JsonNode url = u.path("url");
        URI uri = null;
        if (url.isTextual()) {
          try {
            uri = new URI(url.asText());
          } catch (URISyntaxException ex) {
            uri = null;
          }
        }
        if (uri == null || !"http".equals(uri.getScheme()) || uri.getHost() == null
            || (uri.getPath() != null && !uri.getPath().isEmpty() && !uri.getPath().equals("/"))
            || uri.getQuery() != null || uri.getUserInfo() != null) {
          problem(path + ".url", url, "an http://host:port URL without path, query or user info");
        } else {
          host = uri.getHost();
          port = uri.getPort() == -1 ? 80 : uri.getPort();
        }
      }
      out.put(e.getKey(), new Upstream(e.getKey(), host, port, demo, maxConnections));
    }
    return out;
  }

  private Map<String, Policy> policies(JsonNode n) {
    Map<String, Policy> out = new LinkedHashMap<>();
    if (n.isMissingNode()) {
      return out;
    }
    if (!object("policies", n)) {
      return out;
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      Policy p = policy("policies." + e.getKey(), e.getKey(), e.getValue());
      if (p != null) {
        out.put(e.getKey(), p);
      }
    }
    return out;
  }

  private Policy policy(String path, String name, JsonNode n) {
    if (!object(path, n)) {
      return null;
    }
    keys(path, n, "quota", "window", "unit", "algorithm", "partition", "leaseTimeout", "why",
        "description", "limitType", "guidance", "escalation");
    int before = problems.size();
    long quota = integer(path + ".quota", n.path("quota"), -1, 1, QuotaPolicy.MAX_QUOTA);
    if (n.path("quota").isMissingNode()) {
      problem(path + ".quota", n.path("quota"), "the number of units allowed per window, 1 or more");
    }
    Duration window = duration(path + ".window", n.path("window"), null);
    if (window == null && n.path("window").isMissingNode()) {
      problem(path + ".window", n.path("window"), "the window, such as 1s, 1m, 1h or 1d");
    } else if (window != null && (window.toNanos() % 1_000_000_000L != 0 || window.isZero())) {
      problem(path + ".window", n.path("window"), "a whole number of seconds, at least 1s");
    }
    QuotaUnit unit = QuotaUnit.REQUESTS;
    Optional<String> unitText = optionalText(path + ".unit", n.path("unit"));
    if (unitText.isPresent()) {
      try {
        unit = QuotaUnit.fromToken(unitText.get());
      } catch (IllegalArgumentException ex) {
        problem(path + ".unit", n.path("unit"), "one of requests, content-bytes, concurrent-requests");
      }
    }
    Algorithm algorithm = null;
    Optional<String> algText = optionalText(path + ".algorithm", n.path("algorithm"));
    if (algText.isPresent()) {
      try {
        algorithm = Algorithm.fromToken(algText.get());
      } catch (IllegalArgumentException ex) {
        problem(path + ".algorithm", n.path("algorithm"),
            "one of " + String.join(", ", Arrays.stream(Algorithm.values()).map(Algorithm::token).toList()));
      }
    }
    String partition = optionalText(path + ".partition", n.path("partition")).orElse("client-ip");
    try {
      PartitionKeyDerivation.parse(partition, ClientAddressResolver.direct());
    } catch (IllegalArgumentException ex) {
      problems.add(path + ".partition: " + ex.getMessage());
    }
    Duration leaseTimeout = duration(path + ".leaseTimeout", n.path("leaseTimeout"), null);
    String why = requiredText(path + ".why", n.path("why"),
        "one sentence saying why the limit exists (Graceful Boundaries section 2)");
    Optional<String> description = optionalText(path + ".description", n.path("description"));
    Optional<String> limitType = optionalText(path + ".limitType", n.path("limitType"));
    Map<String, String> guidance = new LinkedHashMap<>();
    JsonNode g = n.path("guidance");
    if (!g.isMissingNode() && object(path + ".guidance", g)) {
      keys(path + ".guidance", g, GUIDANCE.toArray(String[]::new));
      for (String field : GUIDANCE) {
        optionalText(path + ".guidance." + field, g.path(field)).ifPresent(v -> guidance.put(field, v));
      }
    }
    PolicyTexts texts = texts(path, n, why, description, limitType, guidance);
    Optional<Escalation> escalation = Optional.empty();
    JsonNode esc = n.path("escalation");
    if (!esc.isMissingNode() && object(path + ".escalation", esc)) {
      keys(path + ".escalation", esc, "threshold", "block");
      int threshold = (int) integer(path + ".escalation.threshold", esc.path("threshold"), 10, 1, 1_000_000);
      Duration block = duration(path + ".escalation.block", esc.path("block"), Duration.ofMinutes(15));
      if (block != null && (block.isZero() || block.toNanos() % 1_000_000_000L != 0)) {
        problem(path + ".escalation.block", esc.path("block"), "a whole number of seconds, at least 1s");
      }
      escalation = Optional.of(new Escalation(threshold, block));
    }
    if (problems.size() > before) {
      return null;
    }
    try {
      QuotaPolicy.Builder b = QuotaPolicy.builder(name).quota(quota).window(window).unit(unit)
          .partitioning(partition);
      if (algorithm != null) {
        b.algorithm(algorithm);
      }
      if (leaseTimeout != null) {
        b.leaseTimeout(leaseTimeout);
      }
      return new Policy(b.build(), partition, texts, escalation);
    } catch (IllegalArgumentException ex) {
      problems.add(path + ": " + ex.getMessage());
      return null;
    }
  }

  /**
   * The policy's texts, checked by headroom-http now rather than at the first refusal: {@code why}
   * names no mechanism (SC-2) and restates nothing, no text instructs agents (SC-16), the limit type
   * is a token, and the machine-actionable guidance URLs are relative or on {@code service.origin}
   * (SC-6). Each message is reported under the YAML path of the field it concerns.
   */
  private PolicyTexts texts(String path, JsonNode n, String why, Optional<String> description,
      Optional<String> limitType, Map<String, String> guidance) {
    if (why == null) {
      return null;
    }
    PolicyTexts.Builder b = PolicyTexts.builder(why);
    description.ifPresent(b::description);
    if (limitType.isPresent()) {
      try {
        b.limitType(LimitType.of(limitType.get()));
      } catch (IllegalArgumentException e) {
        problems.add(path + ".limitType: " + e.getMessage());
      }
    }
    Optional.ofNullable(guidance.get("cachedResultUrl")).ifPresent(b::cachedResultUrl);
    Optional.ofNullable(guidance.get("alternativeEndpoint")).ifPresent(b::alternativeEndpoint);
    Optional.ofNullable(guidance.get("upgradeUrl")).ifPresent(b::upgradeUrl);
    Optional.ofNullable(guidance.get("humanUrl")).ifPresent(b::humanUrl);
    PolicyTexts texts;
    try {
      texts = b.build();
    } catch (IllegalArgumentException e) {
      problems.add(path + "." + textField(e.getMessage()) + ": " + e.getMessage());
      return null;
    }
    try {
      LimitRefusals.builder().ticker(dev.headroom.Ticker.system()).origin(origin)
          .defaults(texts).build();
    } catch (IllegalArgumentException e) {
      problems.add(path + "." + textField(e.getMessage()) + ": " + e.getMessage());
      return null;
    }
    return texts;
  }

  /** The YAML key under a policy that a headroom-http text message is about. */
  private static String textField(String message) {
    for (String g : GUIDANCE) {
      if (message.contains(g)) {
        return "guidance." + g;
      }
    }
    for (String f : List.of("why", "description", "limitType")) {
      if (message.startsWith(f + ":") || message.contains(" " + f + ":")) {
        return f;
      }
    }
    return "why";
  }

  private List<Route> routes(JsonNode n, Map<String, Upstream> upstreams, Map<String, Policy> policies) {
    List<Route> out = new ArrayList<>();
    if (n.isMissingNode() || !n.isArray() || n.isEmpty()) {
      problem("routes", n, "a list of one or more routes, each with method, path and upstream");
      return out;
    }
    Set<String> seen = new LinkedHashSet<>();
    Set<String> routeNames = new LinkedHashSet<>();
    for (int i = 0; i < n.size(); i++) {
      String path = "routes[" + i + "]";
      JsonNode r = n.get(i);
      if (!object(path, r)) {
        continue;
      }
      keys(path, r, "name", "type", "method", "methods", "path", "upstream", "policies", "dialect", "normaliseErrors", "omitOnRedirect",
          "pk", "vend");
      String type = optionalText(path + ".type", r.path("type")).orElse("http");
      if (!type.equals("http") && !type.equals("vend")) {
        problem(path + ".type", r.path("type"), "http (forwarded as it is) or vend (the vend rate-limit extension)");
      }
      boolean isVend = type.equals("vend");
      Set<String> methods = new LinkedHashSet<>();
      if (!r.path("method").isMissingNode() && !r.path("methods").isMissingNode()) {
        problem(path + ".methods", r.path("methods"), "either method or methods, not both");
      }
      if (!r.path("method").isMissingNode()) {
        method(path + ".method", r.path("method"), methods);
      } else if (r.path("methods").isArray() && !r.path("methods").isEmpty()) {
        for (int j = 0; j < r.path("methods").size(); j++) {
          method(path + ".methods[" + j + "]", r.path("methods").get(j), methods);
        }
      } else if (isVend) {
        methods.add("POST"); // vend calls are POSTed (vend-notes.md, HTTP transport)
      } else {
        problem(path + ".method", r.path("method"), "a method such as GET, or methods: a list of them");
      }
      if (isVend && !methods.equals(Set.of("POST"))) {
        problem(path + ".method", r.path("method").isMissingNode() ? r.path("methods") : r.path("method"),
            "POST only on a vend route (vend calls are POSTed)");
      }
      Optional<Vend> vend = Optional.empty();
      if (isVend) {
        if (!r.path("policies").isMissingNode()) {
          problem(path + ".policies", r.path("policies"), "no policies on a vend route: its limits are per scope, "
              + "under vend.limits");
        }
        vend = vend(path + ".vend", r.path("vend"), policies);
      } else if (!r.path("vend").isMissingNode()) {
        problem(path + ".vend", r.path("vend"), "no vend settings unless type is vend");
      }
      String template = requiredText(path + ".path", r.path("path"), "a path template such as /items/{id}");
      if (template != null) {
        PathTemplate parsed = null;
        try {
          parsed = PathTemplate.parse(template);
        } catch (IllegalArgumentException e) {
          problem(path + ".path", r.path("path"), "a path template of the one grammar (" + e.getMessage() + ")");
        }
        if (parsed != null && RESERVED_PATHS.contains(parsed.toString())) {
          problem(path + ".path", r.path("path"), "a path other than " + RESERVED_PATHS
              + " (the gateway serves the discovery document there)");
        }
      }
      String upstream = requiredText(path + ".upstream", r.path("upstream"), "the name of an upstream");
      if (upstream != null && !upstreams.containsKey(upstream)) {
        problem(path + ".upstream", r.path("upstream"), "one of the upstreams: " + upstreams.keySet());
      }
      List<String> names = new ArrayList<>();
      JsonNode ps = r.path("policies");
      if (!ps.isMissingNode()) {
        if (!ps.isArray()) {
          problem(path + ".policies", ps, "a list of policy names");
        } else {
          for (int j = 0; j < ps.size(); j++) {
            JsonNode p = ps.get(j);
            String pp = path + ".policies[" + j + "]";
            if (!p.isTextual()) {
              problem(pp, p, "a policy name");
            } else if (!policies.containsKey(p.asText())) {
              problem(pp, p, "one of the policies: " + policies.keySet());
            } else if (names.contains(p.asText())) {
              problem(pp, p, "each policy once per route");
            } else {
              names.add(p.asText());
            }
          }
        }
      }
      List<String> dialects = dialects(path + ".dialect", r.path("dialect"));
      boolean normalise = bool(path + ".normaliseErrors", r.path("normaliseErrors"), false);
      boolean omitOnRedirect = bool(path + ".omitOnRedirect", r.path("omitOnRedirect"), false);
      if (template != null) {
        for (String m : methods) {
          if (!seen.add(m + " " + template)) {
            problem(path, r, "a route whose method and path (" + m + " " + template
                + ") no earlier route already has");
          }
        }
      }
      String name = optionalText(path + ".name", r.path("name"))
          .orElse(String.join(",", methods) + " " + template);
      if (!routeNames.add(name)) {
        problem(path + ".name", r.path("name"), "a route name no earlier route has");
      }
      Optional<PkMode> pk = r.path("pk").isMissingNode() ? Optional.empty() : pkMode(path + ".pk", r.path("pk"));
      out.add(new Route(name, methods, template, upstream, names, dialects, normalise, omitOnRedirect, pk, vend));
    }
    return out;
  }

  /**
   * {@code pk: {exposure: off|hash|hmac, keyEnv: NAME | keyFile: PATH}}. The HMAC key is read here,
   * once, from the environment variable or file named (base64, at least 32 bytes); it is never
   * written in the file, and no message repeats it.
   */
  private PkSettings pk(JsonNode n, List<Route> routes) {
    PkMode mode = PkMode.OFF;
    Optional<String> keyEnv = Optional.empty();
    Optional<String> keyFile = Optional.empty();
    if (!n.isMissingNode() && object("pk", n)) {
      keys("pk", n, "exposure", "keyEnv", "keyFile");
      if (!n.path("exposure").isMissingNode()) {
        mode = pkMode("pk.exposure", n.path("exposure")).orElse(PkMode.OFF);
      }
      keyEnv = optionalText("pk.keyEnv", n.path("keyEnv"));
      keyFile = optionalText("pk.keyFile", n.path("keyFile"));
      if (keyEnv.isPresent() && keyFile.isPresent()) {
        problem("pk.keyFile", n.path("keyFile"), "either keyEnv or keyFile, not both");
      }
    }
    boolean hmacUsed = mode == PkMode.HMAC;
    for (Route r : routes) {
      hmacUsed |= r.pk().orElse(PkMode.OFF) == PkMode.HMAC;
    }
    Optional<PartitionKeyExposure> hmac = Optional.empty();
    if (hmacUsed) {
      String key = null;
      if (keyEnv.isPresent()) {
        key = env.apply(keyEnv.get());
        if (key == null) {
          problems.add("pk.keyEnv: the environment variable " + keyEnv.get() + " is not set; expected the "
              + "base64 HMAC key (at least " + PartitionKeyExposures.MIN_HMAC_KEY_LENGTH + " bytes) in it");
        }
      } else if (keyFile.isPresent()) {
        try {
          key = Files.readString(Path.of(keyFile.get()), StandardCharsets.US_ASCII).strip();
        } catch (IOException | RuntimeException e) {
          problems.add("pk.keyFile: cannot read \"" + keyFile.get() + "\" (" + e.getClass().getSimpleName()
              + "); expected a readable file holding the base64 HMAC key");
        }
      } else {
        problem("pk.keyEnv", n.path("keyEnv"), "the name of an environment variable (or keyFile: a file) holding "
            + "the base64 HMAC key, because pk exposure hmac is used");
      }
      if (key != null) {
        try {
          hmac = Optional.of(PartitionKeyExposures.hmacSha256Base64(key));
        } catch (IllegalArgumentException e) {
          problems.add((keyEnv.isPresent() ? "pk.keyEnv" : "pk.keyFile") + ": " + e.getMessage());
        }
      }
    }
    return new PkSettings(mode, keyEnv, keyFile, hmac);
  }

  private Optional<PkMode> pkMode(String path, JsonNode n) {
    if (n.isTextual()) {
      for (PkMode m : PkMode.values()) {
        if (m.token().equals(n.asText())) {
          return Optional.of(m);
        }
      }
    } else if (n.isBoolean() && !n.asBoolean()) {
      return Optional.of(PkMode.OFF); // YAML 1.1 reads a bare off as false
    }
    problem(path, n, "off, hash (a predictable SHA-256 a client can compute) or hmac (keyed)");
    return Optional.empty();
  }

  /**
   * A vend route's settings; the limits are checked by building headroom-vend's
   * {@link VendRateLimits} (policies must count requests; function names are in dot form).
   */
  private Optional<Vend> vend(String path, JsonNode n, Map<String, Policy> policies) {
    if (n.isMissingNode()) {
      problem(path, n, "a mapping with limits: {global|service|function|user: policy name}");
      return Optional.empty();
    }
    if (!object(path, n)) {
      return Optional.empty();
    }
    int before = problems.size();
    keys(path, n, "limits", "user", "service", "documentation", "capabilities", "maxRequestBytes", "maxResponseBytes");
    Map<String, String> limits = new LinkedHashMap<>();
    Map<String, Map<String, String>> functions = new LinkedHashMap<>();
    JsonNode l = n.path("limits");
    if (l.isMissingNode() || !l.isObject()) {
      problem(path + ".limits", l, "a mapping of scopes (global, service, function, user) to policy names, "
          + "and functions: {name: {scope: policy}}");
    } else {
      keys(path + ".limits", l, "global", "service", "function", "user", "functions");
      scopePolicies(path + ".limits", l, policies, limits);
      JsonNode f = l.path("functions");
      if (!f.isMissingNode() && object(path + ".limits.functions", f)) {
        for (Iterator<Map.Entry<String, JsonNode>> it = f.fields(); it.hasNext(); ) {
          Map.Entry<String, JsonNode> e = it.next();
          String fp = path + ".limits.functions." + e.getKey();
          if (object(fp, e.getValue())) {
            keys(fp, e.getValue(), "global", "service", "function", "user");
            Map<String, String> m = new LinkedHashMap<>();
            scopePolicies(fp, e.getValue(), policies, m);
            functions.put(e.getKey(), m);
          }
        }
      }
    }
    Optional<String> user = optionalText(path + ".user", n.path("user"));
    Optional<String> userHeader = Optional.empty();
    if (user.isPresent()) {
      if (user.get().regionMatches(true, 0, "header:", 0, 7) && user.get().substring(7).strip()
          .matches("[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}")) {
        userHeader = Optional.of(user.get().substring(7).strip());
      } else {
        problem(path + ".user", n.path("user"), "header:Name, the request header that names the authenticated user");
      }
    }
    Optional<String> service = optionalText(path + ".service", n.path("service"));
    Optional<URI> documentation = Optional.empty();
    Optional<String> doc = optionalText(path + ".documentation", n.path("documentation"));
    if (doc.isPresent()) {
      try {
        URI u = new URI(doc.get());
        if (!u.isAbsolute()) {
          throw new URISyntaxException(doc.get(), "not absolute");
        }
        documentation = Optional.of(u);
      } catch (URISyntaxException e) {
        problem(path + ".documentation", n.path("documentation"), "an absolute URL");
      }
    }
    String caps = optionalText(path + ".capabilities", n.path("capabilities")).orElse("merge");
    if (!caps.equals("merge") && !caps.equals("local")) {
      problem(path + ".capabilities", n.path("capabilities"), "merge (forward vend.capabilities and add ours) or "
          + "local (the gateway answers it)");
    }
    int maxRequest = (int) integer(path + ".maxRequestBytes", n.path("maxRequestBytes"),
        VendRequestReader.DEFAULT_MAX_BYTES, 64, 64 << 20);
    int maxResponse = (int) integer(path + ".maxResponseBytes", n.path("maxResponseBytes"),
        VendRateLimiter.DEFAULT_MAX_RESPONSE_BYTES, 64, 64 << 20);
    if (problems.size() > before) {
      return Optional.empty();
    }
    Vend v = new Vend(limits, functions, userHeader, service, documentation, caps.equals("merge"), maxRequest,
        maxResponse);
    try {
      VendRoutes.limits(v, policies);
    } catch (IllegalArgumentException e) {
      problems.add(path + ".limits: " + e.getMessage());
      return Optional.empty();
    }
    return Optional.of(v);
  }

  private void scopePolicies(String path, JsonNode n, Map<String, Policy> policies, Map<String, String> into) {
    for (String scope : List.of("global", "service", "function", "user")) {
      JsonNode p = n.path(scope);
      if (p.isMissingNode()) {
        continue;
      }
      if (!p.isTextual() || !policies.containsKey(p.asText())) {
        problem(path + "." + scope, p, "one of the policies: " + policies.keySet());
      } else {
        into.put(scope, p.asText());
      }
    }
  }

  /** One dialect name or a list of them; together they must not write one field in two forms. */
  private List<String> dialects(String path, JsonNode n) {
    List<String> names = new ArrayList<>();
    if (n.isMissingNode()) {
      return List.of(HeaderDialect.IETF.token());
    }
    List<JsonNode> items = new ArrayList<>();
    if (n.isArray() && !n.isEmpty()) {
      n.forEach(items::add);
    } else {
      items.add(n);
    }
    List<HeaderDialect> parsed = new ArrayList<>();
    for (int i = 0; i < items.size(); i++) {
      JsonNode d = items.get(i);
      String p = n.isArray() ? path + "[" + i + "]" : path;
      if (!d.isTextual()) {
        problem(p, d, "a dialect name: " + dialectNames());
        continue;
      }
      try {
        HeaderDialect h = HeaderDialect.fromToken(d.asText());
        parsed.add(h);
        names.add(h.token());
      } catch (IllegalArgumentException e) {
        problems.add(p + ": " + e.getMessage());
      }
    }
    if (parsed.size() > 1) {
      try {
        RateLimitHeaders.builder().dialects(parsed).build();
      } catch (IllegalArgumentException e) {
        problems.add(path + ": " + e.getMessage());
      }
    }
    return names;
  }

  private static String dialectNames() {
    return Arrays.stream(HeaderDialect.values()).map(HeaderDialect::token).toList().toString();
  }

  private void method(String path, JsonNode n, Set<String> into) {
    if (!n.isTextual() || !METHODS.contains(n.asText())) {
      problem(path, n, "one of " + new java.util.TreeSet<>(METHODS));
    } else if (!into.add(n.asText())) {
      problem(path, n, "each method once");
    }
  }

  // ---- scalar helpers ----

  private boolean object(String path, JsonNode n) {
    if (!n.isObject()) {
      problem(path, n, "a mapping");
      return false;
    }
    return true;
  }

  private void keys(String path, JsonNode n, String... allowed) {
    Set<String> set = Set.of(allowed);
    for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
      String k = it.next();
      if (!set.contains(k)) {
        problems.add((path.isEmpty() ? k : path + "." + k) + ": unknown key; expected one of "
            + Arrays.toString(allowed));
      }
    }
  }

  private String requiredText(String path, JsonNode n, String expected) {
    if (!n.isTextual() || n.asText().isBlank()) {
      problem(path, n, expected);
      return null;
    }
    return n.asText();
  }

  private Optional<String> optionalText(String path, JsonNode n) {
    if (n.isMissingNode()) {
      return Optional.empty();
    }
    if (!n.isTextual()) {
      problem(path, n, "a string");
      return Optional.empty();
    }
    return Optional.of(n.asText());
  }

  /** Guidance URLs are relative paths or absolute http(s) URLs (Graceful Boundaries SC-6). */
  private Optional<String> optionalUrl(String path, JsonNode n) {
    Optional<String> text = optionalText(path, n);
    if (text.isEmpty()) {
      return text;
    }
    String v = text.get();
    boolean ok;
    try {
      URI uri = new URI(v);
      ok = (uri.getScheme() == null && v.startsWith("/"))
          || (("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) && uri.getHost() != null);
    } catch (URISyntaxException e) {
      ok = false;
    }
    if (!ok) {
      problem(path, n, "a relative path starting with / or an http(s) URL");
      return Optional.empty();
    }
    return text;
  }

  private long integer(String path, JsonNode n, long dflt, long min, long max) {
    if (n.isMissingNode()) {
      return dflt;
    }
    if (!n.isIntegralNumber() || !n.canConvertToLong() || n.asLong() < min || n.asLong() > max) {
      problem(path, n, "an integer from " + min + " to " + max);
      return dflt;
    }
    return n.asLong();
  }

  private boolean bool(String path, JsonNode n, boolean dflt) {
    if (n.isMissingNode()) {
      return dflt;
    }
    if (!n.isBoolean()) {
      problem(path, n, "true or false");
      return dflt;
    }
    return n.asBoolean();
  }

  private Duration duration(String path, JsonNode n, Duration dflt) {
    if (n.isMissingNode()) {
      return dflt;
    }
    Optional<Duration> d = parseDuration(n);
    if (d.isEmpty()) {
      problem(path, n, "a duration: whole seconds (60) or a value such as 500ms, 30s, 5m, 1h, 1d or PT1H");
      return dflt;
    }
    return d.get();
  }

  /** Parses whole seconds, {@code 500ms}/{@code 30s}/{@code 5m}/{@code 1h}/{@code 1d}, or ISO-8601. */
  static Optional<Duration> parseDuration(JsonNode n) {
    if (n.isIntegralNumber() && n.canConvertToLong() && n.asLong() > 0) {
      return Optional.of(Duration.ofSeconds(n.asLong()));
    }
    if (!n.isTextual()) {
      return Optional.empty();
    }
    String v = n.asText().trim();
    Matcher m = SHORT_DURATION.matcher(v);
    if (m.matches()) {
      long amount = Long.parseLong(m.group(1));
      if (amount <= 0) {
        return Optional.empty();
      }
      return Optional.of(switch (m.group(2)) {
        case "ms" -> Duration.ofMillis(amount);
        case "s" -> Duration.ofSeconds(amount);
        case "m" -> Duration.ofMinutes(amount);
        case "h" -> Duration.ofHours(amount);
        default -> Duration.ofDays(amount);
      });
    }
    try {
      Duration d = Duration.parse(v.toUpperCase(Locale.ROOT));
      return d.isNegative() || d.isZero() ? Optional.empty() : Optional.of(d);
    } catch (DateTimeParseException e) {
      return Optional.empty();
    }
  }

  private void problem(String path, JsonNode value, String expected) {
    problems.add(path + ": " + describe(value) + "; expected " + expected);
  }

  private static String describe(JsonNode n) {
    if (n == null || n instanceof MissingNode || n.isMissingNode()) {
      return "missing";
    }
    if (n.isNull()) {
      return "null";
    }
    if (n.isTextual()) {
      String t = n.asText();
      return "\"" + (t.length() > 80 ? t.substring(0, 77) + "..." : t) + "\" is not valid";
    }
    if (n.isObject()) {
      return "a mapping is not valid";
    }
    if (n.isArray()) {
      return "a list is not valid";
    }
    return n.toString() + " is not valid";
  }
}
