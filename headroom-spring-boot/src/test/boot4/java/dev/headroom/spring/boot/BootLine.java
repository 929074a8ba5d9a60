package dev.headroom.spring.boot;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.core.annotation.AliasFor;

/**
 * What the tests name of Spring Boot 4 where Boot 3 and 4 differ (Boot 4 split its auto-configuration and test slices into modules: spring-boot-webmvc, spring-boot-webmvc-test). The same test classes run on
 * both lines: this one is in src/test/boot4.
 */
public final class BootLine {

  /** Spring MVC's auto-configuration. */
  public static final Class<?> WEB_MVC_AUTO_CONFIGURATION = WebMvcAutoConfiguration.class;

  /** {@code @WebMvcTest}: a Spring MVC test slice. */
  @Target(ElementType.TYPE)
  @Retention(RetentionPolicy.RUNTIME)
  @WebMvcTest
  public @interface WebMvcSlice {
    /** The controllers of the slice. */
    @AliasFor(annotation = WebMvcTest.class, attribute = "controllers")
    Class<?>[] controllers() default {};

    /** The test's properties. */
    @AliasFor(annotation = WebMvcTest.class, attribute = "properties")
    String[] properties() default {};
  }

  private BootLine() {}
}
