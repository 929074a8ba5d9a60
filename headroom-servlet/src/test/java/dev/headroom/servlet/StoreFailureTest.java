package dev.headroom.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Acquisition;
import dev.headroom.Decision;
import dev.headroom.Lease;
import dev.headroom.ManualTicker;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.Store;
import dev.headroom.StoreException;
import dev.headroom.enforcement.Gate;
import dev.headroom.enforcement.GateListener;
import dev.headroom.enforcement.RouteRules;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.PolicyTexts;
import dev.headroom.http.body.ProblemType;
import dev.headroom.http.body.ServiceErrors;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** When the store cannot decide: allow without fields, or refuse with 503 and a Graceful Boundaries body. */
class StoreFailureTest {

  /** A store whose backend is down. */
  static final class DownStore implements Store {
    @Override
    public Decision acquire(List<Acquisition> acquisitions) {
      throw new StoreException("backend unreachable");
    }

    @Override
    public void charge(Acquisition acquisition) {}

    @Override
    public void refund(Acquisition acquisition) {}

    @Override
    public void release(Lease lease) {}
  }

  private final AtomicInteger failures = new AtomicInteger();

  private HttpResponse<String> requestThrough(Gate.StoreFailureMode mode) throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    HeadroomFilter filter = HeadroomFilter.builder()
        .limiter(QuotaLimiter.of(new DownStore()))
        .refusals(LimitRefusals.builder().ticker(ticker).defaults(PolicyTexts.builder("Limits keep the service fair.").build()).build())
        .route(Route.builder("/a").policy(QuotaPolicy.builder("p").quota(1).window(Duration.ofMinutes(1)).build()).build())
        .storeFailureMode(mode)
        .listener(new GateListener() {
          @Override
          public void decided(RouteRules route, Decision decision) {}

          @Override
          public void storeFailed(RouteRules route, StoreException failure) {
            failures.incrementAndGet();
          }
        })
        .build();
    EmbeddedTomcat tomcat = EmbeddedTomcat.start(new HttpServlet() {
      private static final long serialVersionUID = 1L;

      @Override
      protected void doGet(HttpServletRequest req, HttpServletResponse res) throws IOException {
        res.getWriter().write("ok");
      }
    }, filter);
    try {
      return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(tomcat.base() + "/a"))
          .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    } finally {
      tomcat.close();
    }
  }

  @Test
  void allowLetsTheRequestThroughWithoutFields() throws Exception {
    HttpResponse<String> r = requestThrough(Gate.StoreFailureMode.ALLOW);
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("ok");
    assertThat(r.headers().firstValue("RateLimit")).isEmpty();
    assertThat(failures).hasValue(1);
  }

  /** As the gateway answers (draft-09 section 5.2; headroom-http ServiceErrors.storeUnavailable). */
  @Test
  void refuseAnswers503TemporaryReducedCapacityWithTheSharedRetryAfter() throws Exception {
    HttpResponse<String> r = requestThrough(Gate.StoreFailureMode.REFUSE);
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.headers().firstValue("Retry-After")).hasValue(Long.toString(ServiceErrors.STORE_RETRY_AFTER_SECONDS));
    assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("application/problem+json");
    assertThat(r.headers().firstValue("Cache-Control")).hasValue("no-store");
    assertThat(r.body()).contains("\"type\":\"" + ProblemType.TEMPORARY_REDUCED_CAPACITY.uri() + "\"")
        .contains("\"error\":\"temporary_reduced_capacity\"").contains("\"why\":")
        .contains("\"retryAfterSeconds\":" + ServiceErrors.STORE_RETRY_AFTER_SECONDS);
    assertThat(failures).hasValue(1);
  }
}
