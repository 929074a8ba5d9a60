package dev.headroom.spring.boot;

import dev.headroom.QuotaPolicy;
import dev.headroom.enforcement.settings.SettingsReader;
import dev.headroom.http.path.PathTemplate;
import dev.headroom.enforcement.RouteRules;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BiPredicate;
import java.util.function.Predicate;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * Reads {@link RateLimited} from the handler methods Spring MVC or Spring WebFlux has mapped (their
 * {@code RequestMappingHandlerMapping}s: {@link Mvc}, {@link WebFlux}) and turns each mapping
 * into {@link Handled} routes: one per path pattern, with the mapping's methods. Spring path patterns become
 * templates of Headroom's one grammar ({@link PathTemplate}): {@code {*rest}} and {@code **} become
 * a final {@code **}; {@code {name}} and {@code {name:regex}} stay as they are; a segment mixing
 * text and wildcards (such as {@code *.json}) becomes one whole-segment wildcard, which matches at
 * least every request the handler serves; a literal, which Spring compares with the decoded
 * segment, is percent-encoded where the grammar needs it ({@link PathTemplate#literal}).
 *
 * <p>A template can match more requests than its handler serves: a more specific pattern of an
 * unannotated handler ({@code /api/items/health} beside {@code /api/items/{id}}), a wider
 * wildcard, or conditions of the mapping (params, headers, consumes, produces) that templates do
 * not express. So each route carries a condition: the handler the framework resolves for the request
 * ({@link HandlerResolution} for Spring MVC, {@link ReactiveHandlerResolution} for WebFlux) must be
 * the annotated method.
 *
 * <p>This class names neither stack's types but in its nested {@link Mvc} and {@link WebFlux}, each
 * loaded only by the auto-configuration of its own stack.
 */
final class RateLimitedHandlers {

  /**
   * One route of an annotated handler: its rules, and the condition that the request is the
   * handler's (null: every request its template matches).
   *
   * @param <R> the request type (servlet request or exchange)
   */
  record Handled<R>(RouteRules rules, Predicate<R> condition) {}

  /** One request mapping of a handler method, in no stack's types: its methods and path patterns. */
  record Mapping(HandlerMethod handler, Set<RequestMethod> methods, Set<String> patterns) {}

  private RateLimitedHandlers() {}

  /**
   * @param mappings the framework's request mappings
   * @param runs whether the framework will run a method for a request: each route then applies
   *     only to requests that its own handler method serves (null: to every request its template
   *     matches)
   */
  static <R> List<Handled<R>> routes(List<Mapping> mappings, Map<String, QuotaPolicy> policies,
      BiPredicate<R, Method> runs) {
    List<Entry<R>> entries = new ArrayList<>();
    for (Mapping e : mappings) {
      HandlerMethod handler = e.handler();
      Method method = handler.getMethod();
      RateLimited annotation = AnnotatedElementUtils.findMergedAnnotation(method, RateLimited.class);
      if (annotation == null) {
        annotation = AnnotatedElementUtils.findMergedAnnotation(handler.getBeanType(), RateLimited.class);
      }
      if (annotation == null) {
        continue;
      }
      String where = "@RateLimited on " + handler.getBeanType().getSimpleName() + "." + method.getName();
      Set<String> methods = new TreeSet<>();
      for (RequestMethod m : e.methods()) {
        methods.add(m.name());
      }
      for (String pattern : e.patterns()) {
        RouteRules.Builder b = RouteRules.builder(template(pattern)).methods(methods).listed(annotation.listed());
        Predicate<R> condition = runs == null ? null : request -> runs.test(request, method);
        if (annotation.value().length == 0) {
          throw new HeadroomConfigurationException(where, "{}", "names of one or more policies of headroom.policies "
              + policies.keySet());
        }
        for (String name : annotation.value()) {
          QuotaPolicy p = policies.get(name);
          if (p == null) {
            throw new HeadroomConfigurationException(where, name, "the name of a policy of headroom.policies "
                + policies.keySet());
          }
          b.policy(p);
        }
        if (annotation.dialects().length > 0) {
          SettingsReader dialects = SettingsReader.properties("headroom");
          b.dialects(dialects.dialects(where + " dialects", Arrays.asList(annotation.dialects())));
          dialects.throwIfProblems(HeadroomConfigurationException::new);
        }
        if (!annotation.key().isEmpty()) {
          b.key(annotation.key());
        }
        if (!annotation.note().isEmpty()) {
          b.note(annotation.note());
        }
        try {
          entries.add(new Entry<>(PathPatternParser.defaultInstance.parse(pattern), new Handled<>(b.build(), condition)));
        } catch (IllegalArgumentException ex) {
          throw new HeadroomConfigurationException(where, pattern, "a usable route (" + ex.getMessage() + ")", ex);
        }
      }
    }
    // Most specific first, as Spring MVC itself chooses among patterns; then by text for a stable order.
    entries.sort(Comparator.comparing((Entry<R> en) -> en.pattern, PathPattern.SPECIFICITY_COMPARATOR)
        .thenComparing(en -> en.route.rules().toString()));
    List<Handled<R>> routes = new ArrayList<>(entries.size());
    entries.forEach(en -> routes.add(en.route));
    return routes;
  }

  /** The request mappings of Spring MVC's {@code RequestMappingHandlerMapping}. */
  static final class Mvc {
    private Mvc() {}

    static List<Mapping> mappings(
        org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping mapping) {
      List<Mapping> out = new ArrayList<>();
      mapping.getHandlerMethods().forEach((info, handler) -> out.add(
          new Mapping(handler, info.getMethodsCondition().getMethods(), info.getPatternValues())));
      return out;
    }
  }

  /** The request mappings of Spring WebFlux's {@code RequestMappingHandlerMapping}. */
  static final class WebFlux {
    private WebFlux() {}

    static List<Mapping> mappings(
        org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping mapping) {
      List<Mapping> out = new ArrayList<>();
      mapping.getHandlerMethods().forEach((info, handler) -> {
        Set<String> patterns = new TreeSet<>();
        info.getPatternsCondition().getPatterns().forEach(p -> patterns.add(p.getPatternString()));
        out.add(new Mapping(handler, info.getMethodsCondition().getMethods(), patterns));
      });
      return out;
    }
  }

  /** A Spring path pattern as a Headroom path template. */
  static String template(String pattern) {
    if (pattern.isEmpty() || pattern.equals("/")) {
      return "/";
    }
    String[] segments = (pattern.startsWith("/") ? pattern.substring(1) : pattern).split("/", -1);
    StringBuilder t = new StringBuilder();
    for (int i = 0; i < segments.length; i++) {
      String s = segments[i];
      String out;
      if (s.startsWith("{*") || s.equals("**")) {
        t.append("/**");
        break;
      } else if (s.startsWith("{") && s.endsWith("}") && s.indexOf('}') == s.length() - 1) {
        out = s; // one-segment variable, with or without a regex
      } else if (s.contains("{") || s.contains("*") || s.contains("?")) {
        out = "*";
      } else {
        out = PathTemplate.literal(s); // Spring matches literals against decoded segments
      }
      t.append('/').append(out);
    }
    return t.toString();
  }

  private static final class Entry<R> {
    final PathPattern pattern;
    final Handled<R> route;

    Entry(PathPattern pattern, Handled<R> route) {
      this.pattern = pattern;
      this.route = route;
    }
  }
}
