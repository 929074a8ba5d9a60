package dev.headroom.examples.scg;

import java.util.Map;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.event.ContextClosedEvent;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;

/**
 * A Spring Cloud Gateway application limited by Headroom: the routes are in
 * {@code application.yaml}; {@code demo.upstream} is where they go (by default a small upstream this
 * application starts itself, {@link DemoUpstream}).
 */
@SpringBootApplication
public class DemoGateway {

  /** Callers are told apart by their API key; a caller without one is refused by RequestRateLimiter (403). */
  @Bean
  KeyResolver apiKeyResolver() {
    return exchange -> Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst("X-Api-Key"));
  }

  public static void main(String[] args) {
    start(Map.of(), args);
  }

  /**
   * Starts the demo upstream (unless {@code demo.upstream} is given) and the gateway.
   *
   * @param properties properties that take precedence over application.yaml (tests give a free port)
   */
  static ConfigurableApplicationContext start(Map<String, Object> properties, String... args) {
    SpringApplicationBuilder app = new SpringApplicationBuilder(DemoGateway.class).properties(properties);
    DisposableServer upstream = null;
    if (System.getProperty("demo.upstream") == null && System.getenv("DEMO_UPSTREAM") == null
        && !properties.containsKey("demo.upstream")) {
      upstream = DemoUpstream.start();
      app.properties(Map.of("demo.upstream", "http://127.0.0.1:" + upstream.port()));
    }
    ConfigurableApplicationContext ctx = app.run(args);
    if (upstream != null) {
      DisposableServer started = upstream;
      ctx.addApplicationListener((ContextClosedEvent e) -> started.disposeNow());
    }
    return ctx;
  }
}
