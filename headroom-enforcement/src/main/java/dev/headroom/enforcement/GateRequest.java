package dev.headroom.enforcement;

import dev.headroom.enforcement.partition.RequestView;
import java.util.List;

/**
 * A request as the {@link Gate} sees it, whatever the server: the {@link RequestView} its partition
 * keys are derived from (method, decoded path within the application, headers, peer address, user),
 * plus the request target an HTML refusal names as its JSON alternate. The front end implements it
 * over its own request type; {@link #route()} is ignored (the gate sets the matched template). Used
 * by one thread at a time.
 */
public interface GateRequest extends RequestView {

  /** The request target as received: the path as sent and, when present, {@code ?} and the query. */
  String target();

  /** The first value of a header, or null. */
  default String header(String name) {
    List<String> values = headers(name);
    return values.isEmpty() ? null : values.get(0);
  }
}
