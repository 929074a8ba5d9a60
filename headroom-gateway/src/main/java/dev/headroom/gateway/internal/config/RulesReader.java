package dev.headroom.gateway.internal.config;

import com.fasterxml.jackson.databind.JsonNode;
import dev.headroom.enforcement.partition.AllowList;
import dev.headroom.gateway.config.PolicyRules;
import dev.headroom.gateway.config.RouteCost;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Reads a policy's rules ({@code allow}, {@code count}, {@code when}, {@code shadow},
 * {@code shadowFields}: {@link PolicyRules}) and a route's {@code cost} ({@link RouteCost}: a
 * number, or {@code {units, header, max, chargeHeader}}).
 */
final class RulesReader extends SectionReader {
  /** The largest cost a request or a response header may state. */
  static final long MAX_COST = 1_000_000;

  RulesReader(List<String> problems) {
    super(problems);
  }

  PolicyRules rules(String path, JsonNode n) {
    AllowList allowList = AllowList.NONE;
    JsonNode allow = n.path("allow");
    if (!allow.isMissingNode() && object(path + ".allow", allow)) {
      keys(path + ".allow", allow, "cidrs", "apiKeys", "header");
      String field = path + ".allow";
      String header = optionalText(field + ".header", allow.path("header")).orElse(AllowList.DEFAULT_HEADER);
      // each entry checked alone, so that every bad one is reported; the header once, below
      List<String> cidrs = valid(texts(field + ".cidrs", allow.path("cidrs"), "a list of CIDR blocks such as 10.0.0.0/8"),
          c -> AllowList.of(field, List.of(c), List.of(), AllowList.DEFAULT_HEADER));
      List<String> keys = valid(texts(field + ".apiKeys", allow.path("apiKeys"), "a list of SHA-256 hex digests of API keys"),
          k -> AllowList.of(field, List.of(), List.of(k), AllowList.DEFAULT_HEADER));
      try {
        allowList = AllowList.of(field, cidrs, keys, header);
      } catch (IllegalArgumentException e) {
        problems.add(e.getMessage());
      }
    }
    PolicyRules.CountMode count = PolicyRules.CountMode.ALL;
    Optional<String> countText = optionalText(path + ".count", n.path("count"));
    if (countText.isPresent()) {
      switch (countText.get()) {
        case "all" -> count = PolicyRules.CountMode.ALL;
        case "failures" -> count = PolicyRules.CountMode.FAILURES;
        case "successes" -> count = PolicyRules.CountMode.SUCCESSES;
        default -> problem(path + ".count", n.path("count"), "all, failures (responses 400 and up) or successes (below 400)");
      }
    }
    Set<String> methods = new LinkedHashSet<>();
    Set<String> routes = new LinkedHashSet<>();
    JsonNode when = n.path("when");
    if (!when.isMissingNode() && object(path + ".when", when)) {
      keys(path + ".when", when, "methods", "routes");
      for (String m : texts(path + ".when.methods", when.path("methods"), "a list of methods such as [POST]")) {
        methods.add(m.toUpperCase(Locale.ROOT));
      }
      routes.addAll(texts(path + ".when.routes", when.path("routes"), "a list of route names"));
    }
    boolean shadow = bool(path + ".shadow", n.path("shadow"), false);
    boolean shadowFields = bool(path + ".shadowFields", n.path("shadowFields"), false);
    if (shadowFields && !shadow) {
      problem(path + ".shadowFields", n.path("shadowFields"), "shadowFields only with shadow: true");
    }
    return new PolicyRules(allowList, count, methods, routes, shadow, shadowFields);
  }

  /** The entries {@code check} accepts; each it refuses is a problem, its message naming the field. */
  private List<String> valid(List<String> entries, Consumer<String> check) {
    List<String> out = new ArrayList<>(entries.size());
    for (String e : entries) {
      try {
        check.accept(e);
        out.add(e);
      } catch (IllegalArgumentException x) {
        problems.add(x.getMessage());
      }
    }
    return out;
  }

  RouteCost cost(String path, JsonNode n) {
    if (n.isMissingNode()) {
      return RouteCost.ONE;
    }
    if (n.isIntegralNumber()) {
      long units = integer(path, n, 1, 0, MAX_COST);
      return new RouteCost(units, Optional.empty(), units, Optional.empty());
    }
    if (!object(path, n)) {
      return RouteCost.ONE;
    }
    keys(path, n, "units", "header", "max", "chargeHeader");
    long units = integer(path + ".units", n.path("units"), 1, 0, MAX_COST);
    Optional<String> header = optionalText(path + ".header", n.path("header"));
    Optional<String> charge = optionalText(path + ".chargeHeader", n.path("chargeHeader"));
    long max = integer(path + ".max", n.path("max"), Math.max(units, 1), 1, MAX_COST);
    if ((header.isPresent() || charge.isPresent()) && n.path("max").isMissingNode()) {
      problem(path + ".max", n.path("max"), "the largest cost a header may state (1 to " + MAX_COST
          + "), required with header or chargeHeader");
    }
    if (units > max) {
      problem(path + ".units", n.path("units"), "at most max (" + max + ")");
    }
    return new RouteCost(units, header, max, charge);
  }

  private List<String> texts(String path, JsonNode n, String expected) {
    List<String> out = new ArrayList<>();
    if (n.isMissingNode()) {
      return out;
    }
    if (!n.isArray()) {
      problem(path, n, expected);
      return out;
    }
    for (int i = 0; i < n.size(); i++) {
      if (!n.get(i).isTextual() || n.get(i).asText().isBlank()) {
        problem(path + "[" + i + "]", n.get(i), expected);
      } else {
        out.add(n.get(i).asText());
      }
    }
    return out;
  }
}
