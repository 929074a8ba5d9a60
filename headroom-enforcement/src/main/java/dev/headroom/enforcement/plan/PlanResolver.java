package dev.headroom.enforcement.plan;

import dev.headroom.enforcement.partition.RequestView;
import java.util.concurrent.CompletionStage;

/**
 * Finds the plan of a request from its identity (an API key, a bearer token, ...). The service
 * provider interface behind plans: headroom-plans provides a key file, a JWT claim and a SQL query;
 * an application may provide its own (a Spring bean, for example).
 *
 * <p>Contract: {@link #resolve} never throws and never blocks the calling thread (a gateway calls it
 * on an event loop): work that waits (a database) runs elsewhere and completes the stage, within the
 * resolver's own deadline, with {@link PlanResolution.Unavailable} when it cannot. A stage that
 * completes exceptionally is taken as {@code Unavailable} by the caller. Implementations are
 * thread-safe.
 */
public interface PlanResolver extends AutoCloseable {

  /** The plan of the request's identity; see {@link PlanResolution} for what each outcome means. */
  CompletionStage<PlanResolution> resolve(RequestView request);

  /** Releases what the resolver holds (pools, threads); by default nothing. */
  @Override
  default void close() {}
}
