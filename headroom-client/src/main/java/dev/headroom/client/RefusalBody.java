package dev.headroom.client;

import java.net.http.HttpResponse.BodySubscriber;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;

/**
 * The body of a refusal as the client reads it: at most a bounded number of bytes, the rest
 * drained and dropped, so that no refusal can make the client allocate without bound.
 */
final class RefusalBody {

  private final byte[] bytes;
  private final boolean truncated;

  RefusalBody(byte[] bytes, boolean truncated) {
    this.bytes = bytes;
    this.truncated = truncated;
  }

  byte[] bytes() {
    return bytes.clone();
  }

  boolean truncated() {
    return truncated;
  }

  /** A subscriber keeping the first {@code max} bytes. Thread-safe as the Flow contract requires (calls are serial). */
  static BodySubscriber<RefusalBody> subscriber(int max) {
    return new BodySubscriber<>() {
      private final CompletableFuture<RefusalBody> result = new CompletableFuture<>();
      private byte[] buf = new byte[Math.min(max, 4096)];
      private int size;
      private boolean truncated;

      @Override
      public CompletionStage<RefusalBody> getBody() {
        return result;
      }

      @Override
      public void onSubscribe(Flow.Subscription subscription) {
        subscription.request(Long.MAX_VALUE);
      }

      @Override
      public void onNext(List<ByteBuffer> items) {
        for (ByteBuffer b : items) {
          int n = Math.min(b.remaining(), max - size);
          if (n < b.remaining()) {
            truncated = true;
          }
          if (n > 0) {
            if (size + n > buf.length) {
              buf = Arrays.copyOf(buf, Math.min(max, Math.max(buf.length * 2, size + n)));
            }
            b.get(buf, size, n);
            size += n;
          }
        }
      }

      @Override
      public void onError(Throwable throwable) {
        result.completeExceptionally(throwable);
      }

      @Override
      public void onComplete() {
        result.complete(new RefusalBody(Arrays.copyOf(buf, size), truncated));
      }
    };
  }
}
