package dev.headroom.webflux;

import java.util.concurrent.atomic.AtomicLong;
import org.reactivestreams.Publisher;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The response of an admitted request whose content bytes are charged: counts the bytes of every
 * buffer as the application hands it to the server (ARCHITECTURE.md, request step 7), so that they can be
 * charged once the response is complete. A buffer counts when the server takes it for writing. Safe
 * to read from any thread.
 */
final class MeteredResponse extends ServerHttpResponseDecorator {
  private final AtomicLong bytes = new AtomicLong();

  MeteredResponse(ServerHttpResponse delegate) {
    super(delegate);
  }

  /** Content bytes handed to the server so far. */
  long bytesWritten() {
    return bytes.get();
  }

  @Override
  public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
    return super.writeWith(Flux.from(body).doOnNext(this::count));
  }

  @Override
  public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
    return super.writeAndFlushWith(Flux.from(body).map(p -> Flux.from(p).doOnNext(this::count)));
  }

  private void count(DataBuffer buffer) {
    bytes.addAndGet(buffer.readableByteCount());
  }
}
