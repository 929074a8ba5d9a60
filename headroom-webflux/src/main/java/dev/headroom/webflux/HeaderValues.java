package dev.headroom.webflux;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.List;
import org.springframework.http.HttpHeaders;

/**
 * Every value of one header field of Spring's {@link HttpHeaders}, on Spring Framework 6 and 7
 * alike. Framework 7 (Spring Boot 4) made {@code HttpHeaders} no longer a {@code Map}: its lookup
 * became {@code get(String)} where Framework 6 had the map's {@code get(Object)}, so a call compiled
 * against either fails to link on the other ({@code NoSuchMethodError}). This resolves the one the
 * running Framework has, once; the handle is a constant, so the call costs what a direct one does.
 * Lookup stays Spring's: case-insensitive, each field line one value, no splitting at commas
 * (which {@code getValuesAsList}, present on both, would do). Stateless and thread-safe.
 */
final class HeaderValues {

  /** {@code (HttpHeaders, String) -> List<String>}, the values or null. */
  private static final MethodHandle GET = lookup();

  private HeaderValues() {}

  /** The values of the field {@code name}, in order; empty when the field is absent. */
  static List<String> of(HttpHeaders headers, String name) {
    List<String> values;
    try {
      @SuppressWarnings("unchecked")
      List<String> found = (List<String>) GET.invokeExact(headers, name);
      values = found;
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable t) {
      throw new IllegalStateException("HttpHeaders lookup of " + name + " failed", t);
    }
    return values == null ? List.of() : values;
  }

  private static MethodHandle lookup() {
    MethodHandles.Lookup lookup = MethodHandles.publicLookup();
    MethodType exact = MethodType.methodType(List.class, HttpHeaders.class, String.class);
    try {
      return lookup.findVirtual(HttpHeaders.class, "get", MethodType.methodType(List.class, String.class)) // 7
          .asType(exact);
    } catch (NoSuchMethodException absent) {
      try {
        return lookup.findVirtual(HttpHeaders.class, "get", MethodType.methodType(List.class, Object.class)) // 6
            .asType(exact);
      } catch (NoSuchMethodException | IllegalAccessException e) {
        throw new IllegalStateException("Spring's HttpHeaders has neither get(String) nor get(Object)", e);
      }
    } catch (IllegalAccessException e) {
      throw new IllegalStateException("Spring's HttpHeaders.get(String) is not public", e);
    }
  }
}
