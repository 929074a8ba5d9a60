package dev.headroom.spring.cloud.gateway;

import java.net.URI;
import java.util.Map;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import reactor.core.publisher.Mono;

/**
 * A Spring Cloud Gateway application for the tests: auto-configured (Spring Cloud Gateway and
 * Headroom), on Netty, on a free loopback port, with a {@code KeyResolver} reading
 * {@code X-Api-Key}. The routes and Headroom's settings are the properties each test gives.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
class GatewayApp {

  @Bean
  KeyResolver apiKeyResolver() {
    return exchange -> Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst("X-Api-Key"));
  }

  /** A running application and its base URI. */
  record Running(ConfigurableApplicationContext context, URI base) implements AutoCloseable {
    @Override
    public void close() {
      context.close();
    }

    <T> T bean(Class<T> type) {
      return context.getBean(type);
    }
  }

  /** Starts the application with these properties (and any further configuration classes). */
  static Running start(Map<String, Object> properties, Class<?>... more) {
    return start(properties, ctx -> { }, more);
  }

  /** Starts the application with these properties, beans the initializer registers, and configuration classes. */
  static Running start(Map<String, Object> properties, ApplicationContextInitializer<ConfigurableApplicationContext> beans,
      Class<?>... more) {
    Class<?>[] sources = new Class<?>[more.length + 1];
    sources[0] = GatewayApp.class;
    System.arraycopy(more, 0, sources, 1, more.length);
    ConfigurableApplicationContext ctx = new SpringApplicationBuilder(sources)
        .web(WebApplicationType.REACTIVE)
        .properties(Map.of("server.address", "127.0.0.1", "server.port", "0", "spring.main.banner-mode", "off"))
        .properties(properties)
        .initializers(beans)
        .run();
    int port = ctx.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
    return new Running(ctx, URI.create("http://127.0.0.1:" + port));
  }
}
