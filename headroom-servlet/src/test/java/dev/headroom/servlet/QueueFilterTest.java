package dev.headroom.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.InMemoryStore;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.Ticker;
import dev.headroom.enforcement.Gate;
import dev.headroom.enforcement.RouteRules;
import dev.headroom.enforcement.Waiting;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.PolicyTexts;
import io.undertow.Undertow;
import io.undertow.servlet.Servlets;
import io.undertow.servlet.api.DeploymentInfo;
import io.undertow.servlet.api.DeploymentManager;
import io.undertow.servlet.util.ImmediateInstanceFactory;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A policy's queue ({@code Waiting}) behind the filter in Tomcat 10.1, Jetty 12 and Undertow 2.3 on
 * real ports: a burst beyond the policy waits for its turn in servlet asynchronous processing (the
 * container's thread given back) and is answered 200 with its RateLimit fields on the ASYNC
 * dispatch, instead of 429; a request refused after waiting, or finding the queue full, gets the
 * ordinary 429 and never reaches the application.
 */
class QueueFilterTest {

  enum Container { TOMCAT, JETTY, UNDERTOW }

  /** The application: counts the requests it serves. */
  static final class Counting extends HttpServlet {
    final AtomicInteger served = new AtomicInteger();

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      served.incrementAndGet();
      resp.setContentType("text/plain");
      resp.getWriter().write("ok");
    }
  }

  private final HttpClient client = HttpClient.newHttpClient();

  private static HeadroomFilter filter(int quota, Waiting waiting) {
    QuotaPolicy paced = QuotaPolicy.builder("paced").quota(quota).window(Duration.ofSeconds(1)).partitioning("global")
        .build();
    Gate<HttpServletRequest> gate = Gate.<HttpServletRequest>builder()
        .limiter(QuotaLimiter.of(InMemoryStore.builder().build()))
        .refusals(LimitRefusals.builder().ticker(Ticker.system())
            .defaults(PolicyTexts.builder("Limits keep the service responsive for every caller.").build()).build())
        .route(RouteRules.builder("/paced").policy(paced).build())
        .queue("paced", waiting)
        .build();
    return HeadroomFilter.builder(gate).build();
  }

  private List<HttpResponse<String>> burst(URI base, int n) throws Exception {
    List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      sent.add(client.sendAsync(HttpRequest.newBuilder(base.resolve("/paced")).timeout(Duration.ofSeconds(30)).build(),
          HttpResponse.BodyHandlers.ofString()));
    }
    List<HttpResponse<String>> out = new ArrayList<>();
    for (CompletableFuture<HttpResponse<String>> f : sent) {
      out.add(f.get(30, TimeUnit.SECONDS));
    }
    return out;
  }

  @ParameterizedTest
  @EnumSource(Container.class)
  void aBurstWaitsForItsTurnAndIsServedWithItsFields(Container container) throws Exception {
    Counting app = new Counting();
    // 2 a second: 2 at once, then one each 500 ms; the sixth waits 2 s
    try (Running server = start(container, app, filter(2, new Waiting(Duration.ofSeconds(5), 100)))) {
      long began = System.nanoTime();
      List<HttpResponse<String>> answers = burst(server.base(), 6);
      long took = System.nanoTime() - began;
      for (HttpResponse<String> r : answers) {
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).isEqualTo("ok");
        assertThat(r.headers().firstValue("RateLimit-Policy").orElseThrow()).contains("\"paced\";q=2;w=1");
        assertThat(r.headers().firstValue("RateLimit")).isPresent();
      }
      assertThat(app.served).hasValue(6);
      // the sixth unit is there 2 s after the first: a bound the policy sets, not a speed
      assertThat(Duration.ofNanos(took)).isGreaterThanOrEqualTo(Duration.ofMillis(1800));
    }
  }

  @ParameterizedTest
  @EnumSource(Container.class)
  void whatCannotWaitIsRefusedAndNeverReachesTheApplication(Container container) throws Exception {
    Counting app = new Counting();
    // 1 a second; a refused request waits up to 1.5 s, 2 at most
    try (Running server = start(container, app, filter(1, new Waiting(Duration.ofMillis(1500), 2)))) {
      List<HttpResponse<String>> answers = burst(server.base(), 5);
      int ok = 0;
      for (HttpResponse<String> r : answers) {
        if (r.statusCode() == 200) {
          ok++;
        } else {
          assertThat(r.statusCode()).isEqualTo(429);
          assertThat(r.headers().firstValue("Retry-After")).isPresent();
          assertThat(r.body()).contains("quota-exceeded");
        }
      }
      // one at once, one after 1 s; the third's turn (2 s) is past its wait, two find the queue full
      assertThat(ok).isEqualTo(2);
      assertThat(app.served).hasValue(2);
    }
  }

  /** A started container: its base URI, and what stops it. */
  record Running(URI base, AutoCloseable stop) implements AutoCloseable {
    @Override
    public void close() throws Exception {
      stop.close();
    }
  }

  private static Running start(Container container, HttpServlet app, HeadroomFilter filter) throws Exception {
    return switch (container) {
      case TOMCAT -> {
        EmbeddedTomcat tomcat = EmbeddedTomcat.start(app, filter, DispatcherType.REQUEST, DispatcherType.ASYNC);
        yield new Running(tomcat.base(), tomcat);
      }
      case JETTY -> jetty(app, filter);
      case UNDERTOW -> undertow(app, filter);
    };
  }

  private static Running jetty(HttpServlet app, HeadroomFilter filter) throws Exception {
    Server server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler ctx = new ServletContextHandler();
    ctx.setContextPath("/");
    ServletHolder servlet = new ServletHolder(app);
    servlet.setAsyncSupported(true);
    ctx.addServlet(servlet, "/*");
    FilterHolder holder = new FilterHolder(filter);
    holder.setAsyncSupported(true);
    ctx.addFilter(holder, "/*", EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC));
    server.setHandler(ctx);
    server.start();
    return new Running(URI.create("http://127.0.0.1:" + connector.getLocalPort()), server::stop);
  }

  private static Running undertow(HttpServlet app, HeadroomFilter filter) throws Exception {
    DeploymentInfo info = Servlets.deployment()
        .setClassLoader(QueueFilterTest.class.getClassLoader())
        .setContextPath("/")
        .setDeploymentName("queue")
        .addServlet(Servlets.servlet("app", HttpServlet.class, new ImmediateInstanceFactory<>(app))
            .addMapping("/*").setAsyncSupported(true))
        .addFilter(Servlets.filter("headroom", HeadroomFilter.class, new ImmediateInstanceFactory<>(filter))
            .setAsyncSupported(true))
        .addFilterUrlMapping("headroom", "/*", DispatcherType.REQUEST)
        .addFilterUrlMapping("headroom", "/*", DispatcherType.ASYNC);
    DeploymentManager manager = Servlets.defaultContainer().addDeployment(info);
    manager.deploy();
    Undertow undertow = Undertow.builder().addHttpListener(0, "127.0.0.1").setHandler(manager.start()).build();
    undertow.start();
    int port = ((InetSocketAddress) undertow.getListenerInfo().get(0).getAddress()).getPort();
    return new Running(URI.create("http://127.0.0.1:" + port), () -> {
      undertow.stop();
      manager.stop();
      manager.undeploy();
    });
  }
}
