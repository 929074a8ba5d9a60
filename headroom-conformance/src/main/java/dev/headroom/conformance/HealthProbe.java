package dev.headroom.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.function.Predicate;

/**
 * Reads a Spring application's actuator health endpoints over HTTP, and the behaviour every Spring
 * front end's {@code headroom} health contributor shares while a {@link RedisProcess} goes away and
 * comes back (the Spring Boot starter's, servlet and reactive; the Spring Cloud Gateway
 * integration's). The application exposes {@code health} with details always shown and the probes
 * on. Keeps its base URI and HTTP client.
 */
public final class HealthProbe {

  /** How long a reading, or a change of state, may take on a loaded machine. */
  public static final Duration TIMEOUT = Duration.ofSeconds(30);

  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient client = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
  private final URI base;

  /** A probe of the application at {@code base}, such as {@code http://127.0.0.1:PORT}. */
  public HealthProbe(URI base) {
    this.base = base;
  }

  /** An answer: its HTTP status and its JSON body (a null node when empty). */
  public record Reply(int status, JsonNode body) {
    /** The body's {@code status}. */
    public String health() {
      return body.path("status").asText();
    }
  }

  /** GETs {@code path} and answers its HTTP status only (its body need not be JSON). */
  public int status(String path) throws Exception {
    return client.send(HttpRequest.newBuilder(base.resolve(path)).timeout(TIMEOUT).GET().build(),
        HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  /** GETs {@code path}, whose body is JSON or empty. */
  public Reply get(String path) throws Exception {
    HttpResponse<String> r = client.send(HttpRequest.newBuilder(base.resolve(path)).timeout(TIMEOUT).GET().build(),
        HttpResponse.BodyHandlers.ofString());
    return new Reply(r.statusCode(), r.body().isEmpty() ? JSON.nullNode() : JSON.readTree(r.body()));
  }

  /** GETs {@code path} until {@code done} holds of it or {@link #TIMEOUT} passes (Redis's loss or return is seen asynchronously). */
  public Reply await(String path, Predicate<Reply> done) throws Exception {
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    Reply r = get(path);
    while (!done.test(r) && System.nanoTime() < deadline) {
      Thread.sleep(50);
      r = get(path);
    }
    return r;
  }

  /**
   * With the store failing closed on {@code redis}, which is up: {@code headroom} is {@code UP}
   * and the readiness group 200; {@code redis} stopped, {@code headroom} is {@code DOWN} (503) and
   * the readiness group, which it joined of itself, 503, with liveness 200 and the overall status
   * 503; {@code redis} started again, readiness is 200 and {@code headroom} {@code UP}.
   */
  public void failsClosedWhileGone(RedisProcess redis) throws Exception {
    Reply up = get("/actuator/health/headroom");
    assertThat(up.status()).isEqualTo(200);
    assertThat(up.health()).isEqualTo("UP");
    assertThat(up.body().path("details").path("uri").asText()).isEqualTo("redis://127.0.0.1:" + redis.port());
    assertThat(up.body().path("details").path("whenRedisCannotDecide").asText()).isEqualTo("refuse");
    // the probes' readiness group shows no components: its status tells that headroom is a member
    assertThat(get("/actuator/health/readiness").status()).isEqualTo(200);

    redis.stop();
    Reply down = await("/actuator/health/headroom", r -> r.status() != 200);
    assertThat(down.status()).isEqualTo(503);
    assertThat(down.health()).isEqualTo("DOWN");
    assertThat(down.body().path("details").path("connected").asBoolean()).isFalse();
    Reply ready = get("/actuator/health/readiness");
    assertThat(ready.status()).isEqualTo(503);
    assertThat(ready.health()).isEqualTo("DOWN");
    assertThat(get("/actuator/health/liveness").status()).isEqualTo(200);
    assertThat(get("/actuator/health").status()).isEqualTo(503);

    redis.start();
    Reply back = await("/actuator/health/readiness", r -> r.status() == 200);
    assertThat(back.status()).isEqualTo(200);
    assertThat(get("/actuator/health/headroom").health()).isEqualTo("UP");
  }

  /**
   * With a store on {@code redis}, which is up, that does not refuse what it cannot decide
   * ({@code whenRedisCannotDecide}: {@code fallback} or {@code admit}): {@code headroom} is
   * {@code UP}; {@code redis} stopped, it is {@code DEGRADED}, which is 200, leaves the overall
   * status {@code UP} and readiness 200.
   */
  public void degradedWhileGone(RedisProcess redis, String whenRedisCannotDecide) throws Exception {
    Reply up = get("/actuator/health/headroom");
    assertThat(up.health()).isEqualTo("UP");
    assertThat(up.body().path("details").path("whenRedisCannotDecide").asText()).isEqualTo(whenRedisCannotDecide);

    redis.stop();
    Reply degraded = await("/actuator/health/headroom", r -> !r.health().equals("UP"));
    assertThat(degraded.status()).isEqualTo(200);
    assertThat(degraded.health()).isEqualTo("DEGRADED");
    Reply health = get("/actuator/health");
    assertThat(health.status()).isEqualTo(200);
    assertThat(health.health()).isEqualTo("UP");
    assertThat(health.body().path("components").path("headroom").path("status").asText()).isEqualTo("DEGRADED");
    assertThat(get("/actuator/health/readiness").status()).isEqualTo(200);
  }
}
