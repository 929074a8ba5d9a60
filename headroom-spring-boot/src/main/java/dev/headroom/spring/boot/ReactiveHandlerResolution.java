package dev.headroom.spring.boot;

import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebExchangeDecorator;

/**
 * Finds the handler method Spring WebFlux will run for an exchange, before its
 * {@code DispatcherHandler} runs, so that a {@link RateLimited} route applies only to requests its
 * own handler serves: WebFlux's counterpart of {@link HandlerResolution}.
 *
 * <p>It asks the application's {@link HandlerMapping}s in the {@code DispatcherHandler}'s order
 * (their {@code Ordered} order), as {@code DispatcherHandler} does: the first mapping that gives a
 * handler decides. The route condition runs on the event loop and must not block: a mapping's
 * answer is taken only when it is there at once (the request mapping and router function mappings
 * answer at once). A mapping that fails (Spring answers such requests itself: 405, 406, 415),
 * answers later, or gives a handler that is not a handler method: no annotated handler. The
 * mappings see a view of the exchange whose attributes are its own, so the patterns and variables
 * they record do not leak into the real exchange. The result is kept in one exchange attribute, so
 * an exchange that matches several annotated templates is resolved once. The mappings are looked up
 * on the first request, once every bean is made.
 *
 * <p>Cost: one handler lookup more per request whose path matches an annotated route's template
 * (the {@code DispatcherHandler} repeats it). Thread-safe.
 */
final class ReactiveHandlerResolution {

  /** The exchange attribute holding the resolved handler method (or none). */
  static final String ATTRIBUTE = ReactiveHandlerResolution.class.getName() + ".handler";

  private final ObjectProvider<HandlerMapping> provider;
  private volatile List<HandlerMapping> mappings;

  ReactiveHandlerResolution(ObjectProvider<HandlerMapping> mappings) {
    this.provider = mappings;
  }

  /** Whether Spring WebFlux will run {@code method} for the exchange. */
  boolean runs(ServerWebExchange exchange, Method method) {
    return HandlerResolution.runs(exchange::getAttribute, exchange.getAttributes()::put, ATTRIBUTE,
        () -> resolve(exchange), method);
  }

  private Method resolve(ServerWebExchange exchange) {
    List<HandlerMapping> all = mappings;
    if (all == null) {
      all = provider.orderedStream().toList();
      mappings = all;
    }
    ServerWebExchange probe = new OwnAttributes(exchange);
    for (HandlerMapping mapping : all) {
      CompletableFuture<Object> handler;
      try {
        handler = mapping.getHandler(probe).toFuture();
      } catch (RuntimeException e) {
        return null;
      }
      if (!handler.isDone()) {
        handler.cancel(false); // answers later: not known without waiting, which an event loop must not
        return null;
      }
      if (handler.isCompletedExceptionally()) {
        return null; // the mapping refuses the request (no method, media type...): Spring answers it
      }
      Object found = handler.getNow(null);
      if (found != null) {
        return found instanceof HandlerMethod h ? h.getMethod() : null;
      }
    }
    return null;
  }

  /** The exchange with attributes of its own: a copy of the exchange's, written here only. */
  static final class OwnAttributes extends ServerWebExchangeDecorator {
    private final Map<String, Object> attributes;

    OwnAttributes(ServerWebExchange exchange) {
      super(exchange);
      this.attributes = new ConcurrentHashMap<>(exchange.getAttributes());
    }

    @Override
    public Map<String, Object> getAttributes() {
      return attributes;
    }
  }
}
