package dev.headroom.spring.boot;

import dev.headroom.http.body.Refusal;
import dev.headroom.http.body.RefusalFormat;
import dev.headroom.http.body.ServiceErrors;
import jakarta.servlet.http.HttpServletRequest;
import java.util.List;
import java.util.Map;
import org.springframework.core.MethodParameter;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.converter.HttpMessageConverter;
import org.springframework.http.server.ServerHttpRequest;
import org.springframework.http.server.ServerHttpResponse;
import org.springframework.http.server.ServletServerHttpRequest;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.servlet.mvc.method.annotation.ResponseBodyAdvice;

/**
 * Completes the RFC 9457 {@link ProblemDetail} bodies Spring MVC writes itself (its
 * {@code ResponseEntityExceptionHandler}, with {@code spring.mvc.problemdetails.enabled}, or an
 * application's subclass of it, or a handler returning a {@code ProblemDetail} or
 * {@code ErrorResponse}) into Graceful Boundaries bodies (section 6): where a problem lacks them it
 * gains the {@code error} token, {@code detail} and {@code why} every Headroom front end sends for
 * its status (headroom-http {@link ServiceErrors#forStatus}). What the application set is kept.
 *
 * <p>Installed by {@link HeadroomErrorAutoConfiguration} with {@link HeadroomErrorController}.
 * Stateless and thread-safe.
 */
@ControllerAdvice
public class HeadroomProblemDetails implements ResponseBodyAdvice<Object> {

  private final String discoveryPath;

  /** @param discoveryPath where the discovery document is served, or null when discovery is off */
  public HeadroomProblemDetails(String discoveryPath) {
    this.discoveryPath = discoveryPath;
  }

  @Override
  public boolean supports(MethodParameter returnType, Class<? extends HttpMessageConverter<?>> converterType) {
    return true;
  }

  @Override
  public Object beforeBodyWrite(Object body, MethodParameter returnType, MediaType contentType,
      Class<? extends HttpMessageConverter<?>> converterType, ServerHttpRequest request, ServerHttpResponse response) {
    if (!(body instanceof ProblemDetail problem) || problem.getStatus() < 400 || problem.getStatus() > 599) {
      return body;
    }
    Map<String, Object> props = problem.getProperties();
    if (props != null && props.containsKey("error") && props.containsKey("why") && problem.getDetail() != null) {
      return body;
    }
    String method = request.getMethod() == null ? "GET" : request.getMethod().name();
    String path = request instanceof ServletServerHttpRequest s ? pathOf(s.getServletRequest()) : request.getURI().getPath();
    List<String> allowed = ServiceErrors.allowedMethods(response.getHeaders().getFirst(HttpHeaders.ALLOW));
    int status = problem.getStatus() == 405 && allowed.isEmpty() ? 400 : problem.getStatus();
    Refusal texts = ServiceErrors.forStatus(status, method, path, allowed, discoveryPath);
    if (problem.getDetail() == null) {
      problem.setDetail(texts.detail().orElse(null));
    }
    if (props == null || !props.containsKey("error")) {
      problem.setProperty("error", texts.error().orElse(null));
    }
    if (props == null || !props.containsKey("why")) {
      problem.setProperty("why", texts.why().orElse(null));
    }
    if (problem.getStatus() == 405 && !allowed.isEmpty() && (props == null || !props.containsKey("allowedMethods"))) {
      problem.setProperty("allowedMethods", allowed);
    }
    // getFirst, not containsKey: Framework 7 has no HttpHeaders.containsKey(Object), 6 no containsHeader
    if (response.getHeaders().getFirst(HttpHeaders.CACHE_CONTROL) == null) {
      RefusalFormat.refusalFields((name, value) -> response.getHeaders().set(name, value));
    }
    return problem;
  }

  private static String pathOf(HttpServletRequest request) {
    return request.getRequestURI();
  }
}
