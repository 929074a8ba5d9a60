package dev.headroom.spring.boot.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;

/**
 * Adds Headroom's auto-configuration to a Spring MVC test slice, which leaves it out by default:
 *
 * <pre>{@code
 * @WebMvcTest(ItemController.class)
 * @AutoConfigureHeadroom
 * class ItemControllerTest {
 *   @Autowired MockMvc mvc;
 *   ...
 * }
 * }</pre>
 *
 * <p>The filter then runs in MockMvc with the test's {@code headroom.*} properties; define a
 * {@code dev.headroom.Ticker} bean (a {@code ManualTicker}) to drive time.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ImportAutoConfiguration
public @interface AutoConfigureHeadroom {}
