package dev.headroom.examples.demo;

import dev.headroom.servlet.UserResolver;
import dev.headroom.spring.boot.RateLimited;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * A small catalogue API limited by Headroom. The policies are in application.yaml; handler methods
 * name them with {@link RateLimited}; {@code /api/export} is limited by a route in the configuration.
 * Every policy offers guidance ({@code upgrade-url: /pricing}, an alternative endpoint), so the
 * discovery document declares Graceful Boundaries level 4, and the starter answers Spring's own
 * errors (404, 405, 500) with {@code error}, {@code detail} and {@code why}: {@code headroom check
 * --probe} rates it level 4 ({@code DemoConformanceTest}).
 */
@SpringBootApplication
public class DemoApplication {

  public static void main(String[] args) {
    SpringApplication.run(DemoApplication.class, args);
  }

  /**
   * Who the user is, for the {@code per-user} policy. A real application reads its security
   * context; the demo trusts an {@code X-Demo-User} header, which stands for a signed-in session.
   */
  @Bean
  UserResolver demoUsers() {
    return request -> Optional.ofNullable(request.getHeader("X-Demo-User"));
  }

  @RestController
  static class CatalogueController {

    @GetMapping("/api/items/{id}")
    @RateLimited(value = "per-client", key = "item")
    Map<String, String> item(@PathVariable String id) {
      return Map.of("id", id, "name", "Item " + id);
    }

    @PostMapping("/api/orders")
    @RateLimited(value = {"per-client", "orders-per-user"}, key = "order")
    Map<String, Object> order(@RequestBody Map<String, Object> order) {
      return Map.of("accepted", true, "order", order);
    }

    @GetMapping("/api/reports/{id}")
    @RateLimited(value = "report-slots", key = "report")
    CompletableFuture<Map<String, String>> report(@PathVariable String id) {
      return CompletableFuture.supplyAsync(() -> Map.of("report", id, "status", "ready"));
    }

    @GetMapping("/api/export")
    String export() {
      return "id,name\n" + "1,Item 1\n".repeat(50);
    }

    /** Where refusals point for higher limits (the policies' upgrade-url): a page that exists. */
    @GetMapping(value = "/pricing", produces = "text/html")
    String pricing() {
      return "<!doctype html><title>Plans</title><h1>Plans</h1>"
          + "<p>Free: 5 catalogue requests a minute, 2 orders an hour, 2 reports at once.</p>"
          + "<p>Team: ask for higher limits at sales@example.com.</p>";
    }

    @GetMapping("/")
    String home() {
      return "Headroom demo. Limits: /.well-known/limits";
    }
  }
}
