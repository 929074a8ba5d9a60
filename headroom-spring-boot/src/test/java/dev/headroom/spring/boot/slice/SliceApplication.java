package dev.headroom.spring.boot.slice;

import dev.headroom.spring.boot.RateLimited;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/** A small application for the test slice. */
@SpringBootApplication
public class SliceApplication {

  @RestController
  static class ItemController {
    @GetMapping("/api/items/{id}")
    @RateLimited(value = "per-client", key = "item")
    String item(@PathVariable String id) {
      return "item " + id;
    }

    @GetMapping("/api/health")
    String health() {
      return "up";
    }
  }
}
