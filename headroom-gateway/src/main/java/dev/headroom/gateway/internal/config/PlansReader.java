package dev.headroom.gateway.internal.config;

import com.fasterxml.jackson.databind.JsonNode;
import dev.headroom.QuotaPolicy;
import dev.headroom.Ticker;
import dev.headroom.enforcement.plan.Plans;
import dev.headroom.enforcement.settings.PlansSettings;
import dev.headroom.enforcement.settings.SettingsReader;
import dev.headroom.gateway.config.PlanSettings;
import dev.headroom.gateway.config.PlanSource;
import dev.headroom.gateway.config.Policy;
import dev.headroom.gateway.internal.PlanResolvers;
import dev.headroom.plans.ApiKeyFileResolver;
import dev.headroom.plans.JwtResolver;
import java.net.MalformedURLException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Reads {@code plans}: the catalog of plans (in file order, smallest first: a refusal's
 * {@code upgradeUrl} is the next plan's {@code url}), each overriding {@code quota}, {@code window}
 * and {@code algorithm} of named policies; the {@code fallback} plan of every caller whose plan
 * cannot be found; and the {@code resolver} that finds a request's plan. Every plan's policies are
 * built now by headroom-http's {@link Plans}, so a plan that makes an invalid policy is reported
 * under its YAML path at load. File paths ({@code file}, {@code jwksFile}, {@code keyFile},
 * {@code passwordFile}) resolve against the configuration file's folder.
 */
final class PlansReader extends SectionReader {

  /** The request header an API key is read from unless {@code resolver.header} says otherwise. */
  static final String DEFAULT_KEY_HEADER = "X-Api-Key";

  /** The resolver types, as {@code plans.resolver.type} names them. */
  static final String TYPES = "api-key-file, jwt, sql";

  /** The environment variables {@code resolver.keyEnv} may name. */
  private final Function<String, String> env;

  PlansReader(List<String> problems, Function<String, String> env, Path folder) {
    super(problems, folder);
    this.env = env;
  }

  /**
   * The section, or empty when absent or invalid (its problems added). The YAML of the catalog is
   * read into headroom-http's settings model ({@link PlansSettings}, which Spring Boot's
   * {@code headroom.plans} binds too) and checked by its converter, each problem named by its YAML path.
   */
  Optional<PlanSettings> plans(JsonNode n, Map<String, Policy> policies) {
    if (n.isMissingNode() || !object("plans", n)) {
      return Optional.empty();
    }
    keys("plans", n, "fallback", "resolver", "catalog");
    int before = problems.size();
    PlansSettings settings = catalog(n.path("catalog"), policies);
    settings.setFallback(requiredText("plans.fallback", n.path("fallback"),
        "the name of the plan of callers whose plan cannot be found (one of plans.catalog)"));
    PlanSource source = resolver(n.path("resolver"));
    Map<String, QuotaPolicy> quotas = new LinkedHashMap<>();
    policies.forEach((name, p) -> quotas.put(name, p.quota()));
    SettingsReader model = SettingsReader.of("", key -> key);
    Optional<Plans> plans = model.plans(settings, quotas);
    addModelProblems(model.problems(), before);
    return problems.size() > before ? Optional.empty() : plans.map(p -> new PlanSettings(p, source));
  }

  private PlansSettings catalog(JsonNode n, Map<String, Policy> policies) {
    PlansSettings out = new PlansSettings();
    if (!object("plans.catalog", n)) {
      return out;
    }
    if (n.isEmpty()) {
      problem("plans.catalog", n, "at least one plan, such as free: {policies: {api: {quota: 60, window: 1m}}}");
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      String path = "plans.catalog." + e.getKey();
      JsonNode p = e.getValue();
      if (!object(path, p)) {
        continue;
      }
      keys(path, p, "url", "policies");
      PlansSettings.Plan plan = new PlansSettings.Plan();
      plan.setUrl(optionalUrl(path + ".url", p.path("url")).orElse(null));
      JsonNode ps = p.path("policies");
      if (!ps.isMissingNode() && object(path + ".policies", ps)) {
        for (Iterator<Map.Entry<String, JsonNode>> pit = ps.fields(); pit.hasNext(); ) {
          Map.Entry<String, JsonNode> o = pit.next();
          String opath = path + ".policies." + o.getKey();
          if (!policies.containsKey(o.getKey())) {
            problems.add(opath + ": not a policy of policies; expected one of " + policies.keySet());
            continue;
          }
          PlansSettings.Override po = override(opath, o.getValue());
          if (po != null) {
            plan.getPolicies().put(o.getKey(), po);
          }
        }
      }
      out.getCatalog().put(e.getKey(), plan);
    }
    return out;
  }

  private PlansSettings.Override override(String path, JsonNode n) {
    if (!object(path, n)) {
      return null;
    }
    keys(path, n, "quota", "window", "algorithm");
    int before = problems.size();
    PlansSettings.Override o = new PlansSettings.Override();
    if (!n.path("quota").isMissingNode()) {
      long quota = integer(path + ".quota", n.path("quota"), -1, 1, QuotaPolicy.MAX_QUOTA);
      o.setQuota(quota < 1 ? null : quota);
    }
    o.setWindow(duration(path + ".window", n.path("window"), null));
    optionalText(path + ".algorithm", n.path("algorithm")).ifPresent(o::setAlgorithm);
    if (o.getQuota() == null && o.getWindow() == null && o.getAlgorithm() == null && problems.size() == before) {
      problem(path, n, "at least one of quota, window, algorithm");
    }
    // what could be read goes on to the model, so that each of its problems is reported too
    return o;
  }

  private PlanSource resolver(JsonNode n) {
    if (!object("plans.resolver", n)) {
      return null;
    }
    String type = requiredText("plans.resolver.type", n.path("type"), "one of " + TYPES);
    if (type == null) {
      return null;
    }
    switch (type) {
      case "api-key-file" -> {
        keys("plans.resolver", n, "type", "file", "header");
        String file = requiredText("plans.resolver.file", n.path("file"),
            "the path of a file of '<sha256-hex> <plan>' lines");
        String header = header(n);
        if (file == null) {
          return null;
        }
        Path path;
        try {
          path = file(file);
          ApiKeyFileResolver.of(path, header == null ? DEFAULT_KEY_HEADER : header);
        } catch (IllegalArgumentException e) {
          problems.add("plans.resolver.file: " + e.getMessage());
          return null;
        }
        return header == null ? null : new PlanSource.KeyFile(path, header);
      }
      case "jwt" -> {
        return jwt(n);
      }
      case "sql" -> {
        return sql(n);
      }
      default -> {
        problem("plans.resolver.type", n.path("type"), "one of " + TYPES);
        return null;
      }
    }
  }

  /**
   * {@code type: jwt}: keys ({@code jwksFile} or {@code jwksUrl}, and/or the HS256 key from
   * {@code keyEnv} or {@code keyFile}), {@code claim}, {@code audience}, {@code issuer},
   * {@code clockSkew}. A resolver is built now (the JWKS file read, the key checked), so that a bad
   * key is reported at load.
   */
  private PlanSource jwt(JsonNode n) {
    String p = "plans.resolver";
    keys(p, n, "type", "jwksFile", "jwksUrl", "keyEnv", "keyFile", "claim", "audience", "issuer", "clockSkew");
    int before = problems.size();
    Optional<Path> jwksFile = Optional.empty();
    Optional<String> jwksName = optionalText(p + ".jwksFile", n.path("jwksFile"));
    if (jwksName.isPresent()) {
      try {
        jwksFile = Optional.of(file(jwksName.get()));
      } catch (IllegalArgumentException e) {
        problem(p + ".jwksFile", n.path("jwksFile"), "the path of a JSON Web Key Set file");
      }
    }
    Optional<URL> jwksUrl = Optional.empty();
    Optional<String> url = optionalText(p + ".jwksUrl", n.path("jwksUrl"));
    if (url.isPresent()) {
      try {
        URI u = new URI(url.get());
        if (!("https".equals(u.getScheme()) || "http".equals(u.getScheme())) || u.getHost() == null) {
          throw new URISyntaxException(url.get(), "not an http(s) URL");
        }
        jwksUrl = Optional.of(u.toURL());
      } catch (URISyntaxException | MalformedURLException | IllegalArgumentException e) {
        problem(p + ".jwksUrl", n.path("jwksUrl"), "an https URL of a JSON Web Key Set");
      }
    }
    if (jwksFile.isPresent() && url.isPresent()) {
      problem(p + ".jwksUrl", n.path("jwksUrl"), "either jwksFile or jwksUrl, not both");
    }
    Optional<String> keyEnv = optionalText(p + ".keyEnv", n.path("keyEnv"));
    Optional<String> keyFile = optionalText(p + ".keyFile", n.path("keyFile"));
    if (keyEnv.isPresent() && keyFile.isPresent()) {
      problem(p + ".keyFile", n.path("keyFile"), "either keyEnv or keyFile, not both");
    }
    Optional<String> key = secret(p + ".keyEnv", keyEnv, p + ".keyFile", keyFile, env,
        "the base64 HS256 key (at least " + JwtResolver.MIN_HMAC_KEY_BYTES + " bytes)");
    if (jwksFile.isEmpty() && url.isEmpty() && keyEnv.isEmpty() && keyFile.isEmpty()) {
      problem(p, n, "jwksFile or jwksUrl (RS256, ES256, EdDSA), or keyEnv or keyFile (HS256)");
    }
    String claim = optionalText(p + ".claim", n.path("claim")).orElse(JwtResolver.DEFAULT_CLAIM);
    Optional<String> audience = optionalText(p + ".audience", n.path("audience"));
    Optional<String> issuer = optionalText(p + ".issuer", n.path("issuer"));
    Duration skew = duration(p + ".clockSkew", n.path("clockSkew"), JwtResolver.DEFAULT_CLOCK_SKEW);
    if (problems.size() > before) {
      return null;
    }
    PlanSource.Jwt jwt = new PlanSource.Jwt(jwksFile, jwksUrl, key, claim, audience, issuer, skew);
    try {
      PlanResolvers.jwt(jwt, Ticker.system()).close();
    } catch (IllegalArgumentException e) {
      String m = e.getMessage();
      String field = m.startsWith("hmacKey") ? (keyEnv.isPresent() ? "keyEnv" : "keyFile")
          : m.startsWith("jwksFile") ? "jwksFile" : m.startsWith("clockSkew") ? "clockSkew"
          : m.startsWith("claim") ? "claim" : "type";
      problems.add(p + "." + field + ": " + m);
      return null;
    }
    return jwt;
  }

  /**
   * {@code type: sql}: {@code url}, {@code user}, the password from {@code passwordEnv} or
   * {@code passwordFile}, {@code query} (one {@code ?}), {@code header}, {@code deadline},
   * {@code poolSize}, {@code cache}. Checked now without connecting: a database that is down at
   * start is the fallback plan until it is back, not a gateway that does not start.
   */
  private PlanSource sql(JsonNode n) {
    String p = "plans.resolver";
    keys(p, n, "type", "url", "user", "passwordEnv", "passwordFile", "query", "header", "deadline", "poolSize", "cache");
    int before = problems.size();
    String url = requiredText(p + ".url", n.path("url"), "a PostgreSQL JDBC URL such as jdbc:postgresql://127.0.0.1:5432/db");
    Optional<String> user = optionalText(p + ".user", n.path("user"));
    Optional<String> passwordEnv = optionalText(p + ".passwordEnv", n.path("passwordEnv"));
    Optional<String> passwordFile = optionalText(p + ".passwordFile", n.path("passwordFile"));
    if (passwordEnv.isPresent() && passwordFile.isPresent()) {
      problem(p + ".passwordFile", n.path("passwordFile"), "either passwordEnv or passwordFile, not both");
    }
    Optional<String> password = secret(p + ".passwordEnv", passwordEnv, p + ".passwordFile", passwordFile, env,
        "the database password");
    String query = requiredText(p + ".query", n.path("query"),
        "a SELECT with one ? for the SHA-256 hex of the key, such as SELECT plan FROM api_keys WHERE key_hash = ?");
    String header = header(n);
    Duration deadline = duration(p + ".deadline", n.path("deadline"), Duration.ofMillis(100));
    int poolSize = (int) integer(p + ".poolSize", n.path("poolSize"), 4, 1, 64);
    JsonNode cache = n.path("cache");
    int maxEntries = 10_000;
    Duration ttl = Duration.ofSeconds(60);
    Duration negativeTtl = Duration.ofSeconds(10);
    if (!cache.isMissingNode() && object(p + ".cache", cache)) {
      keys(p + ".cache", cache, "maxEntries", "ttl", "negativeTtl");
      maxEntries = (int) integer(p + ".cache.maxEntries", cache.path("maxEntries"), maxEntries, 0, 10_000_000);
      ttl = duration(p + ".cache.ttl", cache.path("ttl"), ttl);
      negativeTtl = duration(p + ".cache.negativeTtl", cache.path("negativeTtl"), negativeTtl);
    }
    if (problems.size() > before || header == null) {
      return null;
    }
    PlanSource.Sql sql = new PlanSource.Sql(url, user, password, query, header, deadline, poolSize, maxEntries, ttl, negativeTtl);
    try {
      PlanResolvers.sql(sql, Ticker.system()).close();
    } catch (IllegalArgumentException e) {
      String m = e.getMessage();
      problems.add(p + "." + m.substring(0, Math.max(0, m.indexOf(':'))) + ": " + m);
      return null;
    }
    return sql;
  }

  /** {@code resolver.header}: a header field name; {@value #DEFAULT_KEY_HEADER} when absent; null when invalid. */
  private String header(JsonNode n) {
    String h = optionalText("plans.resolver.header", n.path("header")).orElse(DEFAULT_KEY_HEADER);
    if (!h.matches("[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}")) {
      problem("plans.resolver.header", n.path("header"), "a header field name (RFC 9110 token), such as X-Api-Key");
      return null;
    }
    return h;
  }
}
