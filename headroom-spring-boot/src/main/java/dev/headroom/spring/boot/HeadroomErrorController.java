package dev.headroom.spring.boot;

import dev.headroom.http.body.RefusalFormat;
import dev.headroom.http.body.ServiceErrors;
import dev.headroom.servlet.ErrorBodies;
import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.RequestMapping;

/**
 * Spring Boot's error page ({@code server.error.path}, {@code /error}), answered with Graceful
 * Boundaries bodies (section 6) instead of the {@code BasicErrorController}'s: every error the
 * framework or the container sends through the error page (a 404 for a path no handler serves, a
 * 405 with its {@code Allow}, the 500 of an uncaught exception, a 415 or 406 from content
 * negotiation) gets the {@code error}, {@code detail} and {@code why} every Headroom front end
 * sends for that status (headroom-http {@link ServiceErrors#forStatus}), and {@code allowedMethods}
 * on 405, as problem+json, JSON or HTML by the request's {@code Accept} ({@link RefusalFormat}).
 * The exception and its message are never sent (they are for the log, which the container keeps).
 *
 * <p>Installed by {@link HeadroomErrorAutoConfiguration} unless the application has an
 * {@code ErrorController} of its own or sets {@code headroom.error-bodies.enabled: false}. Spring
 * Boot's {@code ErrorController} marker is in {@code org.springframework.boot.web.servlet.error} up
 * to Boot 3 and in {@code org.springframework.boot.webmvc.error} from Boot 4, so this class names
 * neither: the auto-configuration registers a subclass that implements the one of the Boot line it
 * runs on (which is what keeps Spring's {@code BasicErrorController} away). Stateless and
 * thread-safe.
 */
@Controller
@RequestMapping("${server.error.path:${error.path:/error}}")
public class HeadroomErrorController {

  private final String discoveryPath;
  private final URI origin;

  /**
   * @param discoveryPath where the discovery document is served, or null when discovery is off
   * @param origin the service's origin, or null
   */
  public HeadroomErrorController(String discoveryPath, URI origin) {
    this.discoveryPath = discoveryPath;
    this.origin = origin;
  }

  /** Every error dispatch, whatever its method and media type. */
  @RequestMapping
  public void error(HttpServletRequest request, HttpServletResponse response) throws IOException {
    Object code = request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE);
    int status = code instanceof Integer i && i >= 400 && i <= 599 ? i : response.getStatus() >= 400 ? response.getStatus() : 500;
    Object uri = request.getAttribute(RequestDispatcher.ERROR_REQUEST_URI);
    ErrorBodies.write(request, response, status, uri instanceof String s ? s : request.getRequestURI(), discoveryPath,
        origin);
  }
}
