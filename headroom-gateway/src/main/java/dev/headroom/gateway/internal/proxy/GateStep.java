package dev.headroom.gateway.internal.proxy;

import dev.headroom.enforcement.Gate;
import dev.headroom.enforcement.Verdict;
import io.netty.handler.codec.http.HttpRequest;
import java.util.concurrent.CompletableFuture;

/**
 * The decision step of a forwarded request ({@link Triage.Forward}): the route's policies decide
 * through headroom-http's {@link Gate}, the one enforcement path of every front end (plans, cost,
 * shadow policies, allow lists, escalation, run-time capacity, the store; see {@link Gate}). The
 * answer is a value: the verdict's stage, completed at once when the store answered at once (the
 * in-memory store; a refusal the store remembers), so the exchange acts on it on its own loop
 * without a task, as the gateway did before it shared the gate; a later one is handed back to the
 * loop by the exchange. Stateless.
 */
final class GateStep {
  private GateStep() {}

  /** The verdict on {@code request} under the snapshot's gate; {@code route} has policies. */
  static CompletableFuture<Verdict> decide(Snapshot snap, CompiledRoute route, HttpRequest request, String path,
      ProxyHandler conn) {
    return snap.gate().decideAsync(route.rules(), new ProxiedRequest(request, path, conn)).toCompletableFuture();
  }

  /** What a gate that failed on a bug answers: 503, as for a store that cannot decide. */
  static LocalResponse failed(Snapshot snap, HttpRequest request, String path, ProxyHandler conn) {
    return LocalResponse.of(snap.gate().unavailable(new ProxiedRequest(request, path, conn)));
  }
}
