package dev.headroom.enforcement;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * Adds a health contributor to Spring Boot's {@code readiness} health group, for the Spring front
 * ends (the Spring Boot starter, the Spring Cloud Gateway integration): when the store fails closed
 * ({@link dev.headroom.StoreHealth#failsClosed()}), requests it cannot decide are refused, so an
 * instance whose Redis is gone should be taken out of the load balancer until it is back, without
 * the application having to write
 * {@code management.endpoint.health.group.readiness.include=readinessState,headroom}.
 *
 * <p>Spring Boot lets a library change the health groups through a
 * {@code HealthEndpointGroupsPostProcessor} bean, as its own availability probes do (they add the
 * {@code liveness} and {@code readiness} groups). Boot 3 and Boot 4 have the same interfaces in
 * different packages, so this class names neither: it wraps either line's
 * {@code HealthEndpointGroups} and {@code HealthEndpointGroup} by reflection, each front end's
 * post-processor passing its line's interfaces. Every call is passed on, except that the
 * {@code readiness} group, however it is looked up (by name, by additional path such as
 * {@code /readyz}, among the groups with an additional path), also has the contributor as a member.
 * Where there is no {@code readiness} group (probes off and no such group configured), nothing
 * changes. The post-processor must run after the availability probes' (the front ends'
 * auto-configurations are ordered after theirs), so that the group it adds is there. Keeps no state
 * of its own.
 */
public final class ReadinessGroups {

  /** The name of Spring Boot's readiness group. */
  public static final String READINESS = "readiness";

  private ReadinessGroups() {}

  /**
   * The groups, with {@code member} in the readiness group.
   *
   * @param <G> the line's {@code HealthEndpointGroups}
   * @param groupsType the line's {@code HealthEndpointGroups} interface
   * @param groupType the line's {@code HealthEndpointGroup} interface
   * @param groups the groups Spring Boot made
   * @param member the contributor's name, such as {@code headroom}
   * @return {@code groups} itself when there is no readiness group, else a view of them
   */
  public static <G> G withReadinessMember(Class<G> groupsType, Class<?> groupType, G groups, String member) {
    Object readiness = call(groups, find(groupsType, "get", String.class), READINESS);
    if (readiness == null) {
      return groups;
    }
    Object joined = Proxy.newProxyInstance(groupType.getClassLoader(), new Class<?>[] {groupType},
        passOn(readiness, (method, args) -> method.getName().equals("isMember") && member.equals(args[0]) ? true : null));
    InvocationHandler h = passOn(groups, (method, args) -> {
      if (method.getReturnType() == groupType) {
        Object found = call(groups, method, args);
        return found == readiness ? joined : found;
      }
      if (method.getReturnType() == Set.class && method.getName().equals("getAllWithAdditionalPath")) {
        Set<Object> all = new LinkedHashSet<>();
        for (Object g : (Set<?>) call(groups, method, args)) {
          all.add(g == readiness ? joined : g);
        }
        return all;
      }
      return null;
    });
    return groupsType.cast(Proxy.newProxyInstance(groupsType.getClassLoader(), new Class<?>[] {groupsType}, h));
  }

  /** What a wrapper answers itself: non-null to answer, null to pass the call on. */
  private interface OwnAnswer {
    Object answer(Method method, Object[] args);
  }

  private static InvocationHandler passOn(Object target, OwnAnswer override) {
    return (proxy, method, args) -> {
      if (method.getDeclaringClass() == Object.class) {
        return switch (method.getName()) {
          case "equals" -> proxy == args[0];
          case "hashCode" -> System.identityHashCode(proxy);
          default -> "headroom readiness of " + target;
        };
      }
      Object own = override.answer(method, args);
      return own != null ? own : call(target, method, args);
    };
  }

  private static Object call(Object target, Method method, Object... args) {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException r) {
        throw r;
      }
      if (cause instanceof Error err) {
        throw err;
      }
      throw new IllegalStateException(cause);
    } catch (IllegalAccessException e) {
      throw new IllegalStateException(e);
    }
  }

  private static Method find(Class<?> type, String name, Class<?>... parameters) {
    try {
      return type.getMethod(name, parameters);
    } catch (NoSuchMethodException e) {
      throw new IllegalStateException(type.getName() + " has no " + name + ": not a Spring Boot line Headroom knows", e);
    }
  }
}
