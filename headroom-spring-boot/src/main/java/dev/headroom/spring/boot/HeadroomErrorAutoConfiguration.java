package dev.headroom.spring.boot;

import java.net.URI;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Graceful Boundaries bodies (section 6) for the errors Spring answers itself: the error page
 * ({@link HeadroomErrorController}, in place of the {@code BasicErrorController}, so before
 * {@code ErrorMvcAutoConfiguration}) and the {@code ProblemDetail}s of Spring MVC's exception
 * handling ({@link HeadroomProblemDetails}). On by default; {@code headroom.error-bodies.enabled: false}
 * leaves Spring's own, and an application {@code ErrorController} bean replaces the controller.
 *
 * <p>One artifact serves Spring Boot 3 and 4. The two lines name the error page's classes
 * differently (Boot 4 moved them to its spring-boot-webmvc module), so each line has its own nested
 * configuration, guarded by the name of its {@code ErrorController}: the other line's classes are
 * never loaded. The other Spring Boot classes the starter names as types kept their names across
 * the two lines; the auto-configurations it orders itself against are named as text, both lines'.
 */
@AutoConfiguration(beforeName = {
    HeadroomErrorAutoConfiguration.Boot3ErrorPage.ERROR_MVC_AUTO_CONFIGURATION,
    HeadroomErrorAutoConfiguration.Boot4ErrorPage.ERROR_MVC_AUTO_CONFIGURATION})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(name = "org.springframework.web.servlet.DispatcherServlet")
@ConditionalOnProperty(prefix = "headroom", name = {"enabled", "error-bodies.enabled"}, matchIfMissing = true)
@EnableConfigurationProperties(HeadroomProperties.class)
public class HeadroomErrorAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  HeadroomProblemDetails headroomProblemDetails(HeadroomProperties props) {
    return new HeadroomProblemDetails(discoveryPath(props));
  }

  /** The error page on Spring Boot 3, whose {@code ErrorController} is in spring-boot itself. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = Boot3ErrorPage.ERROR_CONTROLLER)
  static class Boot3ErrorPage {
    static final String ERROR_CONTROLLER = "org.springframework.boot.web.servlet.error.ErrorController";
    static final String ERROR_MVC_AUTO_CONFIGURATION =
        "org.springframework.boot.autoconfigure.web.servlet.error.ErrorMvcAutoConfiguration";

    @Bean
    @ConditionalOnMissingBean(type = ERROR_CONTROLLER)
    Boot3ErrorController headroomErrorController(HeadroomProperties props) {
      return new Boot3ErrorController(discoveryPath(props), origin(props));
    }

    /** {@link HeadroomErrorController} as Spring Boot 3's {@code ErrorController}. */
    static final class Boot3ErrorController extends HeadroomErrorController
        implements org.springframework.boot.web.servlet.error.ErrorController {
      Boot3ErrorController(String discoveryPath, URI origin) {
        super(discoveryPath, origin);
      }
    }
  }

  /** The error page on Spring Boot 4, whose {@code ErrorController} is in spring-boot-webmvc. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = Boot4ErrorPage.ERROR_CONTROLLER)
  static class Boot4ErrorPage {
    static final String ERROR_CONTROLLER = "org.springframework.boot.webmvc.error.ErrorController";
    static final String ERROR_MVC_AUTO_CONFIGURATION =
        "org.springframework.boot.webmvc.autoconfigure.error.ErrorMvcAutoConfiguration";

    @Bean
    @ConditionalOnMissingBean(type = ERROR_CONTROLLER)
    Boot4ErrorController headroomErrorController(HeadroomProperties props) {
      return new Boot4ErrorController(discoveryPath(props), origin(props));
    }

    /** {@link HeadroomErrorController} as Spring Boot 4's {@code ErrorController}. */
    static final class Boot4ErrorController extends HeadroomErrorController
        implements org.springframework.boot.webmvc.error.ErrorController {
      Boot4ErrorController(String discoveryPath, URI origin) {
        super(discoveryPath, origin);
      }
    }
  }

  private static String discoveryPath(HeadroomProperties props) {
    return props.getDiscovery().isEnabled() && !props.getDiscovery().getPaths().isEmpty()
        ? props.getDiscovery().getPaths().get(0) : null;
  }

  private static URI origin(HeadroomProperties props) {
    String o = props.getService().getOrigin();
    return o == null || o.isBlank() ? null : URI.create(o);
  }
}
