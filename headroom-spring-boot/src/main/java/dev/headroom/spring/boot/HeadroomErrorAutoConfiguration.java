package dev.headroom.spring.boot;

import java.net.URI;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.web.servlet.error.ErrorMvcAutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.error.ErrorController;
import org.springframework.context.annotation.Bean;

/**
 * Graceful Boundaries bodies (section 6) for the errors Spring answers itself: the error page
 * ({@link HeadroomErrorController}, in place of the {@code BasicErrorController}, so before
 * {@link ErrorMvcAutoConfiguration}) and the {@code ProblemDetail}s of Spring MVC's exception
 * handling ({@link HeadroomProblemDetails}). On by default; {@code headroom.error-bodies.enabled: false}
 * leaves Spring's own, and an application {@link ErrorController} bean replaces the controller.
 */
@AutoConfiguration(before = ErrorMvcAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(name = "org.springframework.web.servlet.DispatcherServlet")
@ConditionalOnProperty(prefix = "headroom", name = {"enabled", "error-bodies.enabled"}, matchIfMissing = true)
@EnableConfigurationProperties(HeadroomProperties.class)
public class HeadroomErrorAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean(ErrorController.class)
  HeadroomErrorController headroomErrorController(HeadroomProperties props) {
    return new HeadroomErrorController(discoveryPath(props), origin(props));
  }

  @Bean
  @ConditionalOnMissingBean
  HeadroomProblemDetails headroomProblemDetails(HeadroomProperties props) {
    return new HeadroomProblemDetails(discoveryPath(props));
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
