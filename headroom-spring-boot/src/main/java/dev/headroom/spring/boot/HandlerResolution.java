package dev.headroom.spring.boot;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.lang.reflect.Method;
import java.util.Collections;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerExecutionChain;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.servlet.handler.HandlerMappingIntrospector;
import org.springframework.web.util.ServletRequestPathUtils;

/**
 * Finds the handler method Spring MVC will run for a request, before the {@code DispatcherServlet}
 * runs, so that a {@link RateLimited} route applies only to requests its own handler serves.
 *
 * <p>It asks the application's handler mappings in the {@code DispatcherServlet}'s order (those of
 * {@link HandlerMappingIntrospector}), exactly as {@code DispatcherServlet.getHandler} does: the
 * first mapping that returns a handler decides. When a mapping fails (Spring answers such requests
 * itself: 405, 406, 415) or the handler is not a handler method, there is no annotated handler.
 * The mappings see a view of the request whose attributes are its own, so the path they parse and
 * the patterns they record do not leak into the real request. The result is kept in one request
 * attribute, so a request that matches several annotated templates is resolved once.
 *
 * <p>Cost: one handler lookup more per request whose path matches an annotated route's template
 * (the {@code DispatcherServlet} repeats it). Thread-safe.
 */
final class HandlerResolution {

  /** The request attribute holding the resolved handler method (or {@link #NONE}). */
  static final String ATTRIBUTE = HandlerResolution.class.getName() + ".handler";

  private static final Object NONE = new Object();

  private final HandlerMappingIntrospector introspector;

  HandlerResolution(HandlerMappingIntrospector introspector) {
    this.introspector = introspector;
  }

  /** Whether Spring MVC will run {@code method} for the request. */
  boolean runs(HttpServletRequest request, Method method) {
    return runs(request::getAttribute, request::setAttribute, ATTRIBUTE, () -> resolve(request), method);
  }

  /**
   * Whether the resolved handler is {@code method}: the handler kept in a request's (or exchange's)
   * attribute, else {@code resolve}d and kept there ({@link #NONE} for none), so that it is
   * resolved once per request.
   */
  static boolean runs(Function<String, Object> get, BiConsumer<String, Object> put, String attribute,
      Supplier<Method> resolve, Method method) {
    Object resolved = get.apply(attribute);
    if (resolved == null) {
      Method m = resolve.get();
      resolved = m == null ? NONE : m;
      put.accept(attribute, resolved);
    }
    return method.equals(resolved);
  }

  private Method resolve(HttpServletRequest request) {
    List<HandlerMapping> mappings = introspector.getHandlerMappings();
    if (mappings == null || mappings.isEmpty()) {
      return null;
    }
    HttpServletRequest probe = new OwnAttributes(request);
    try {
      ServletRequestPathUtils.parseAndCache(probe);
      for (HandlerMapping mapping : mappings) {
        HandlerExecutionChain chain = mapping.getHandler(probe);
        if (chain != null) {
          Object handler = chain.getHandler();
          return handler instanceof HandlerMethod ? ((HandlerMethod) handler).getMethod() : null;
        }
      }
      return null;
    } catch (Exception e) {
      // The mapping refuses the request (no method, media type...): Spring answers it, no handler runs.
      return null;
    }
  }

  /** The request with attributes of its own: reads fall back to the request's, writes stay here. */
  static final class OwnAttributes extends HttpServletRequestWrapper {
    private final Map<String, Object> attributes = new HashMap<>();
    private final Set<String> removed = new HashSet<>();

    OwnAttributes(HttpServletRequest request) {
      super(request);
    }

    @Override
    public Object getAttribute(String name) {
      if (attributes.containsKey(name)) {
        return attributes.get(name);
      }
      return removed.contains(name) ? null : super.getAttribute(name);
    }

    @Override
    public Enumeration<String> getAttributeNames() {
      Set<String> names = new LinkedHashSet<>(Collections.list(super.getAttributeNames()));
      names.removeAll(removed);
      names.addAll(attributes.keySet());
      return Collections.enumeration(names);
    }

    @Override
    public void setAttribute(String name, Object value) {
      if (value == null) {
        removeAttribute(name);
        return;
      }
      attributes.put(name, value);
      removed.remove(name);
    }

    @Override
    public void removeAttribute(String name) {
      attributes.remove(name);
      removed.add(name);
    }
  }
}
