package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.Acquisition;
import dev.headroom.Decision;
import dev.headroom.InMemoryStore;
import dev.headroom.Lease;
import dev.headroom.Store;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The gateway's close ends its event loops whatever fails on the way (issue 36: a gateway whose
 * close stopped at a failure kept its event-loop threads, which are not daemons, and the JVM
 * outlived {@code main}). A part whose close throws, an exception or an error, is logged and the
 * rest still closes; the failure is then thrown. A drain that fails or is interrupted closes too.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GatewayCloseTest {
  TestUpstream upstream;
  Gateway gateway;

  @AfterEach
  void stop() {
    if (gateway != null) {
      try {
        gateway.close();
      } catch (RuntimeException | Error e) {
        // the failure the test provoked; the test asserted it
      }
    }
    if (upstream != null) {
      upstream.close();
    }
  }

  Gateway start(Store ownedStore) throws Exception {
    upstream = new TestUpstream();
    gateway = Gateway.builder(GatewayConfig.parse("""
        service: {name: Close}
        listen: {port: 0}
        admin: {enabled: false}
        upstreams: {origin: {url: "http://127.0.0.1:%d"}}
        policies:
          ample: {quota: 500, window: 1m, partition: ip, why: So that every exchange goes through the store.}
        routes: [{method: GET, path: "/**", upstream: origin, policies: [ample]}]
        """.formatted(upstream.port()), "close.yaml")).ownedStore(ownedStore).threads(2).start();
    // one exchange through the store and the upstream pool, so that each has something to close
    HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + gateway.address().getPort() + "/echo")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    return gateway;
  }

  @Test
  void aStoreWhoseCloseThrowsIsLoggedTheEventLoopsStillEndAndTheFailureIsThrown() throws Exception {
    IllegalStateException boom = new IllegalStateException("the store's connection is gone");
    Gateway g = start(new FailingClose(() -> boom));

    assertThatThrownBy(g::close).isSameAs(boom);
    assertThat(g.eventLoopsTerminated()).as("the event loops ended").isTrue();
    g.close(); // closing again: nothing more, nothing thrown
  }

  @Test
  void anErrorFromAPartStillLetsTheEventLoopsEnd() throws Exception {
    // an error, as a class that no longer loads from a jar replaced under the running process
    NoClassDefFoundError gone = new NoClassDefFoundError("io/lettuce/core/Gone");
    Gateway g = start(new FailingClose(() -> gone));

    assertThatThrownBy(g::close).isSameAs(gone);
    assertThat(g.eventLoopsTerminated()).isTrue();
  }

  @Test
  void aDrainWhoseCloseFailsEndsTheEventLoopsAndThrowsTheFailure() throws Exception {
    IllegalStateException boom = new IllegalStateException("the store's connection is gone");
    Gateway g = start(new FailingClose(() -> boom));

    assertThatThrownBy(() -> g.drain(Duration.ofSeconds(5))).isSameAs(boom);
    assertThat(g.eventLoopsTerminated()).isTrue();
    assertThat(g.drained().toCompletableFuture().get(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void anInterruptedDrainStillClosesTheGateway() throws Exception {
    Gateway g = start(InMemoryStore.builder().build());
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", g.address().getPort()), 10_000);
      OutputStream o = s.getOutputStream();
      o.write("GET /hang HTTP/1.1\r\nHost: test\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
      o.flush();
      upstream.awaitRequest("/hang"); // an exchange in flight: the drain waits for it

      CompletableFuture<Throwable> outcome = new CompletableFuture<>();
      Thread drainer = new Thread(() -> {
        try {
          g.drain(Duration.ofSeconds(30));
          outcome.complete(null);
        } catch (Throwable t) {
          outcome.complete(t);
        }
      }, "drainer");
      drainer.start();
      drainer.interrupt();

      assertThat(outcome.get(20, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
      assertThat(g.eventLoopsTerminated()).as("the event loops ended").isTrue();
      upstream.release.countDown();
    }
  }

  /** A real in-memory store whose close fails with what {@code failure} gives. */
  private static final class FailingClose implements Store {
    private final Store delegate = InMemoryStore.builder().build();
    private final Supplier<? extends Throwable> failure;

    FailingClose(Supplier<? extends Throwable> failure) {
      this.failure = failure;
    }

    @Override
    public Decision acquire(List<Acquisition> acquisitions) {
      return delegate.acquire(acquisitions);
    }

    @Override
    public void charge(Acquisition acquisition) {
      delegate.charge(acquisition);
    }

    @Override
    public void refund(Acquisition acquisition) {
      delegate.refund(acquisition);
    }

    @Override
    public void release(Lease lease) {
      delegate.release(lease);
    }

    @Override
    public void close() {
      delegate.close();
      Throwable t = failure.get();
      if (t instanceof Error e) {
        throw e;
      }
      throw (RuntimeException) t;
    }
  }
}
