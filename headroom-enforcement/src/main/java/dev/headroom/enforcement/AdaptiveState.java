package dev.headroom.enforcement;

import java.util.Map;

/**
 * What a route's adaptive concurrency ({@link AdaptiveConcurrency}) holds at one moment, for an
 * operator's view ({@link Gate#adaptiveStates()}): the limit learnt, the requests in flight, and,
 * with shares, each named plan's. Read without stopping the route: the numbers may be a request
 * apart from one another.
 *
 * @param route the route's identity: its key, else its methods and path template
 * @param policy the name the limit is advertised under in {@code RateLimit-Policy}
 * @param limit the limit learnt now
 * @param inflight the route's requests in flight now (above {@code limit} while a plan takes back its share)
 * @param shares each named plan's share, by plan name; empty without shares
 */
public record AdaptiveState(String route, String policy, int limit, int inflight, Map<String, Share> shares) {

  /** Copies {@code shares}. */
  public AdaptiveState {
    shares = Map.copyOf(shares);
  }

  /**
   * One plan's share of the limit.
   *
   * @param fraction the share configured, above 0 and at most 1
   * @param guaranteed the requests it keeps under the limit now: {@code ceil(limit * fraction)}
   * @param inflight the plan's requests in flight now
   */
  public record Share(double fraction, int guaranteed, int inflight) {}
}
