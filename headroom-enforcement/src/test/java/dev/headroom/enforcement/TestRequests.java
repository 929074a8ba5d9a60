package dev.headroom.enforcement;

import dev.headroom.enforcement.partition.RequestView;
import java.util.List;
import java.util.Optional;

/** Requests as the gate sees them, for the gate's tests: a method, a path, an {@code X-Api-Key} and more headers. */
final class TestRequests {
  private TestRequests() {}

  /** {@code method path} with {@code X-Api-Key: key} and the header name-value pairs {@code more}. */
  static GateRequest request(String method, String path, String key, String... more) {
    RequestView.Builder b = RequestView.builder().method(method).path(path).header("X-Api-Key", key);
    for (int i = 0; i < more.length; i += 2) {
      b.header(more[i], more[i + 1]);
    }
    RequestView v = b.build();
    return new GateRequest() {
      @Override
      public Optional<String> remoteAddress() {
        return v.remoteAddress();
      }

      @Override
      public String method() {
        return v.method();
      }

      @Override
      public String path() {
        return v.path();
      }

      @Override
      public Optional<String> route() {
        return Optional.empty();
      }

      @Override
      public List<String> headers(String name) {
        return v.headers(name);
      }

      @Override
      public Optional<String> user() {
        return Optional.empty();
      }

      @Override
      public String target() {
        return path;
      }
    };
  }
}
