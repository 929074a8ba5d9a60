package dev.headroom.gateway.internal.config;

import com.fasterxml.jackson.databind.JsonNode;
import dev.headroom.gateway.config.Policy;
import dev.headroom.gateway.config.Vend;
import dev.headroom.vend.VendRateLimiter;
import dev.headroom.vend.format.VendRequestReader;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Reads a vend route's {@code vend} settings (the vend rate-limit extension): scope limits, the
 * user header, documentation and capabilities, checked by building headroom-vend's limits.
 */
final class VendReader extends SectionReader {
  VendReader(List<String> problems) {
    super(problems);
  }

  /**
   * A vend route's settings; the limits are checked by building headroom-vend's
   * {@link VendRateLimits} (policies must count requests; function names are in dot form).
   */
  Optional<Vend> vend(String path, JsonNode n, Map<String, Policy> policies) {
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
      VendLimits.of(v, policies);
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
}
