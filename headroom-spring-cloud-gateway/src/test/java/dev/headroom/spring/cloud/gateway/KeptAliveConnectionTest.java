package dev.headroom.spring.cloud.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.ManualTicker;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * One kept-alive connection carries allowed and refused answers of both integrations, one after
 * another: the {@code Headroom} filter ({@code headroom.cloud-gateway.routes.ID}; its refusal is a
 * problem-details body with its Content-Length) and {@code HeadroomRateLimiter} in
 * {@code RequestRateLimiter} (its refusal has no body, Content-Length 0). curl sends every request
 * on the connection it opened first, and reads each answer by its framing: a refusal written
 * without its length, or a response the filter completes without writing, shows as a second
 * connection, a missing status or a transfer that runs into curl's time limit.
 */
class KeptAliveConnectionTest {

  /** Requests per route and key: the bucket of 6 is refused from the seventh on. */
  private static final int PER_KEY = 9;

  /** A clock that stands still: a bucket refills only when the test says so. */
  @Configuration(proxyBeanMethods = false)
  static class StandingClock {
    @Bean
    ManualTicker ticker() {
      return ManualTicker.atFixedInstant();
    }
  }

  @Test
  void oneConnectionCarriesAllowedAndRefusedAnswersOfTheFilterAndTheRateLimiter() throws Exception {
    DisposableServer upstream = HttpServer.create().host("127.0.0.1").port(0)
        .handle((request, response) -> response.sendString(Mono.just("ok"))).bindNow();
    try (GatewayApp.Running app = GatewayApp.start(properties(upstream.port()), StandingClock.class)) {
      List<String> command = new ArrayList<>(List.of("curl", "-s", "--max-time", "60", "-H", "X-Api-Key: kept-alive",
          "-w", "%{http_code} %{num_connects} %{size_download}\\n"));
      List<String> expected = new ArrayList<>();
      for (int i = 0; i < PER_KEY; i++) {
        for (String route : List.of("filter", "limiter")) {
          command.addAll(List.of("-o", "/dev/null", app.base() + "/" + route + "/items/1"));
          expected.add(route + (i < 6 ? " 200" : " 429"));
        }
      }
      List<String> lines = run(command);
      assertThat(lines).as("one answer per request").hasSize(expected.size());
      List<String> statuses = new ArrayList<>();
      List<String> refusalSizes = new ArrayList<>();
      int connections = 0;
      for (int i = 0; i < lines.size(); i++) {
        String[] answer = lines.get(i).split(" ");
        statuses.add(expected.get(i).split(" ")[0] + " " + answer[0]);
        connections += Integer.parseInt(answer[1]);
        if (answer[0].equals("429")) {
          refusalSizes.add(expected.get(i).split(" ")[0] + (Long.parseLong(answer[2]) > 0 ? " body" : " empty"));
        }
      }
      assertThat(statuses).as("allowed, then refused, on both routes").isEqualTo(expected);
      // the filter refuses with problem details, RequestRateLimiter with no body
      assertThat(refusalSizes).containsExactly("filter body", "limiter empty", "filter body", "limiter empty",
          "filter body", "limiter empty");
      assertThat(connections).as("connections curl opened for %s requests", lines.size()).isEqualTo(1);
    } finally {
      upstream.disposeNow();
    }
  }

  /** Two routes on one bucket size: the Headroom filter and HeadroomRateLimiter. */
  static Map<String, Object> properties(int upstreamPort) {
    Map<String, Object> p = new HashMap<>();
    String up = "http://127.0.0.1:" + upstreamPort;
    String f = "spring.cloud.gateway.server.webflux.routes[0]";
    p.put(f + ".id", "filter");
    p.put(f + ".uri", up);
    p.put(f + ".predicates[0]", "Path=/filter/**");
    p.put(f + ".filters[0]", "Headroom");
    p.put(f + ".filters[1]", "StripPrefix=1");
    String l = "spring.cloud.gateway.server.webflux.routes[1]";
    p.put(l + ".id", "limiter");
    p.put(l + ".uri", up);
    p.put(l + ".predicates[0]", "Path=/limiter/**");
    p.put(l + ".filters[0].name", "RequestRateLimiter");
    p.put(l + ".filters[0].args.key-resolver", "#{@apiKeyResolver}");
    p.put(l + ".filters[0].args.headroom-rate-limiter.quota", "6");
    p.put(l + ".filters[0].args.headroom-rate-limiter.window", "3s");
    p.put(l + ".filters[0].args.headroom-rate-limiter.algorithm", "token-bucket");
    p.put(l + ".filters[1]", "StripPrefix=1");
    p.put("headroom.cloud-gateway.policies.burst.quota", "6");
    p.put("headroom.cloud-gateway.policies.burst.window", "3s");
    p.put("headroom.cloud-gateway.policies.burst.algorithm", "token-bucket");
    p.put("headroom.cloud-gateway.policies.burst.partitioning", "api-key");
    p.put("headroom.cloud-gateway.routes.filter.path", "/filter/**");
    p.put("headroom.cloud-gateway.routes.filter.policies[0]", "burst");
    return p;
  }

  private static List<String> run(List<String> command) throws IOException, InterruptedException {
    Process curl = new ProcessBuilder(command).redirectErrorStream(true).start();
    assertThat(curl.waitFor(90, TimeUnit.SECONDS)).as("curl finished").isTrue();
    String out = new String(curl.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
    assertThat(curl.exitValue()).as("curl's exit status, output %s", out).isZero();
    return out.lines().toList();
  }
}
