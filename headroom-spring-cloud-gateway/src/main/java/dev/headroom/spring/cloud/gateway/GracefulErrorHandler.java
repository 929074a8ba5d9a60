package dev.headroom.spring.cloud.gateway;

import dev.headroom.http.body.Refusal;
import dev.headroom.http.body.RefusalFormat;
import dev.headroom.http.body.ServiceErrors;
import java.util.List;
import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.MethodNotAllowedException;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.publisher.Mono;

/**
 * The gateway's own errors as Graceful Boundaries bodies (section 6): a path no route serves (404),
 * a method a route refuses (405 with {@code Allow}), a failure of the gateway (500), each with
 * {@code error}, {@code detail} and {@code why}, as problem+json, JSON or HTML by the caller's
 * {@code Accept} (headroom-http {@link ServiceErrors#forStatus}), never cached. Ordered before Spring
 * Boot's handler; an error after the response was committed is left to it. A Spring Framework
 * {@code WebExceptionHandler}, not Spring Boot's {@code ErrorWebExceptionHandler}, whose package
 * Boot 4 moved: Boot's default handler is still created, and by its order never reached for the
 * errors this one answers. Stateless.
 */
final class GracefulErrorHandler implements WebExceptionHandler, Ordered {

  /** Before Spring Boot's {@code DefaultErrorWebExceptionHandler} (-1). */
  static final int ORDER = -2;

  private final String discoveryPath;

  GracefulErrorHandler(String discoveryPath) {
    this.discoveryPath = discoveryPath;
  }

  @Override
  public int getOrder() {
    return ORDER;
  }

  @Override
  public Mono<Void> handle(ServerWebExchange exchange, Throwable ex) {
    ServerHttpResponse response = exchange.getResponse();
    if (response.isCommitted()) {
      return Mono.error(ex);
    }
    int status = ex instanceof ResponseStatusException r ? r.getStatusCode().value() : 500;
    if (status < 400 || status > 599) {
      return Mono.error(ex);
    }
    List<String> allowed = ex instanceof MethodNotAllowedException m
        ? m.getSupportedMethods().stream().map(HttpMethod::name).sorted().toList() : List.of();
    if (status == 405 && allowed.isEmpty()) {
      return Mono.error(ex);
    }
    var request = exchange.getRequest();
    Refusal refusal = ServiceErrors.forStatus(status, request.getMethod().name(), request.getURI().getRawPath(), allowed,
        discoveryPath);
    RefusalFormat format = RefusalFormat.negotiate(request.getHeaders().getFirst(HttpHeaders.ACCEPT));
    byte[] body = format.body(refusal, request.getURI().getRawPath());
    response.setStatusCode(HttpStatusCode.valueOf(status));
    HttpHeaders headers = response.getHeaders();
    headers.clear();
    if (!allowed.isEmpty()) {
      headers.set(HttpHeaders.ALLOW, String.join(", ", allowed));
    }
    RefusalFormat.refusalFields(headers::set);
    headers.set(HttpHeaders.CONTENT_TYPE, format.mediaType());
    headers.setContentLength(body.length);
    if (HttpMethod.HEAD.equals(request.getMethod())) {
      return response.setComplete();
    }
    return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
  }
}
