package dev.headroom.client;

import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.headroom.vend.format.RateLimitExtension;
import dev.headroom.vend.format.VendRequest;
import dev.headroom.vend.format.VendRequestException;
import dev.headroom.vend.format.VendRequestReader;
import java.io.IOException;
import java.net.http.HttpRequest.BodyPublisher;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpRequest;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;

/**
 * A vend call as the client sends it: the request (with the extension declared, when the options
 * ask for it) and the function it calls, when its envelope could be read. Immutable.
 */
final class VendCall {

  /** The label every vend call carries: budgets of the global, service and user scopes apply to it. */
  static final String ALL_CALLS = "vend";

  static final ObjectMapper MAPPER = new ObjectMapper();

  static {
    MAPPER.getFactory().setStreamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(64).build());
  }

  private final HttpRequest request;
  private final String function;

  private VendCall(HttpRequest request, String function) {
    this.request = request;
    this.function = function;
  }

  HttpRequest request() {
    return request;
  }

  /** {@code call.function}, when the envelope was read. */
  Optional<String> function() {
    return Optional.ofNullable(function);
  }

  /** The budget selectors this call matches: every vend call, and its function's. */
  Set<String> labels() {
    return function == null ? Set.of(ALL_CALLS) : Set.of(ALL_CALLS, functionLabel(function));
  }

  static String functionLabel(String function) {
    return "vend:function:" + function;
  }

  /**
   * Reads the request's body (when its length is known and within {@code maxBodyBytes}) and, if
   * asked, declares the extension. Never fails: a body that cannot be read or is not a vend
   * envelope leaves the request as it was and the function unknown (the server will say why).
   */
  static CompletableFuture<VendCall> of(HttpRequest request, VendClientOptions options) {
    Optional<BodyPublisher> publisher = request.bodyPublisher();
    if (publisher.isEmpty() || publisher.get().contentLength() < 0
        || publisher.get().contentLength() > options.maxBodyBytes()) {
      return CompletableFuture.completedFuture(new VendCall(request, null));
    }
    int length = (int) publisher.get().contentLength();
    return collect(publisher.get(), length).handle((bytes, error) -> {
      if (error != null || bytes == null) {
        return new VendCall(request, null);
      }
      String function = null;
      boolean declared = false;
      try {
        VendRequest envelope = VendRequestReader.standard().parse(bytes);
        function = envelope.function();
        declared = envelope.declaresRateLimit();
      } catch (VendRequestException notAnEnvelope) {
        // Sent as it is: the server answers INVALID_REQUEST or PARSE_ERROR, which the caller sees.
        function = null;
        declared = true;
      }
      byte[] body = bytes;
      if (options.declareExtension() && !declared) {
        body = declare(bytes);
      }
      // The publisher was consumed once; the request is sent from the bytes read.
      HttpRequest out = HttpRequest.newBuilder(request, (name, value) -> true)
          .method(request.method(), BodyPublishers.ofByteArray(body)).build();
      return new VendCall(out, function);
    });
  }

  /** The envelope with {@code {"urn": URN, "options": {}}} appended to {@code extensions}. */
  private static byte[] declare(byte[] envelope) {
    try {
      ObjectNode root = (ObjectNode) MAPPER.readTree(envelope);
      JsonNode ext = root.get("extensions");
      ArrayNode list = ext instanceof ArrayNode ? (ArrayNode) ext : root.putArray("extensions");
      ObjectNode declaration = list.addObject();
      declaration.put("urn", RateLimitExtension.URN);
      declaration.putObject("options");
      return MAPPER.writeValueAsBytes(root);
    } catch (IOException | ClassCastException e) {
      // Parsed once already by the envelope reader; unreachable unless the reader's rules change.
      return envelope;
    }
  }

  private static CompletableFuture<byte[]> collect(BodyPublisher publisher, int length) {
    CompletableFuture<byte[]> result = new CompletableFuture<>();
    publisher.subscribe(new Flow.Subscriber<>() {
      private final byte[] buf = new byte[length];
      private int size;
      private boolean overflow;

      @Override
      public void onSubscribe(Flow.Subscription subscription) {
        subscription.request(Long.MAX_VALUE);
      }

      @Override
      public void onNext(ByteBuffer item) {
        int n = Math.min(item.remaining(), buf.length - size);
        overflow |= n < item.remaining();
        item.get(buf, size, n);
        size += n;
      }

      @Override
      public void onError(Throwable throwable) {
        result.completeExceptionally(throwable);
      }

      @Override
      public void onComplete() {
        result.complete(overflow || size != buf.length ? null : Arrays.copyOf(buf, size));
      }
    });
    return result;
  }
}
