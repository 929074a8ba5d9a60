package dev.headroom.webflux;

import dev.headroom.conformance.HttpAdapterSpec;
import dev.headroom.conformance.SpecFixture;
import dev.headroom.enforcement.Gate;
import java.net.URI;
import org.springframework.web.server.ServerWebExchange;

/**
 * The HTTP conformance specification (headroom-conformance {@link HttpAdapterSpec}), against the
 * WebFlux filter on a real Reactor Netty server, with BlockHound installed (blockhound-junit-platform):
 * a blocking call on an event loop fails the request, and so the test.
 */
class WebFluxSpecTest extends HttpAdapterSpec {

  private Gate<ServerWebExchange> gate;
  private SpecServer server;

  @Override
  protected URI start(SpecFixture fixture) {
    gate = SpecServer.gate(fixture);
    server = SpecServer.start(SpecServer.handler(fixture), SpecServer.filter(gate, fixture));
    return server.base();
  }

  @Override
  protected void stop() {
    server.close();
  }

  @Override
  protected void reduceCapacity(String policy, double factor) {
    gate.reduceCapacity(policy, factor);
  }
}
