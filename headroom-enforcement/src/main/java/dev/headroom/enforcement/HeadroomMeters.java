package dev.headroom.enforcement;

/**
 * The names and tags of what the gate records when it is given a Micrometer registry
 * ({@link GateBuilder#meterRegistry}, {@link GateBuilder#observationRegistry}): one vocabulary for
 * every front end, since every front end decides through the gate. Tag values come from the
 * configuration (policy names, route templates) and from the fixed sets below, never from a
 * request, so cardinality is bounded.
 *
 * <ul>
 * <li>{@value #DECISIONS} (counter), tags {@value #POLICY}, {@value #OUTCOME}, {@value #PROBLEM}: one
 *   count per policy of every decided request. Outcomes: {@code allowed} (the policy allowed it),
 *   {@code refused}, {@code reduced} (refused under a reduced capacity), {@code blocked} (refused
 *   by an escalation's block without asking the store), {@code bypassed} (allow list),
 *   {@code shadow-allowed}, {@code shadow-refused}, {@code shadow-failed}, and policy
 *   {@value #PLAN_POLICY} with outcome {@code rejected} for an invalid plan credential (401). The
 *   problem is the problem type the refusal is sent as ({@code quota-exceeded},
 *   {@code temporary-reduced-capacity}, {@code abnormal-usage-detected}), {@code
 *   request-exceeds-limit} for a request larger than the whole quota (413), {@code
 *   invalid-credential} for a plan's 401, and {@value #NONE} when nothing was refused.
 * <li>{@value #STORE_LATENCY} (timer): the time the store takes to decide one request, every policy
 *   at once, failures included.
 * <li>{@value #STORE_FAILURES} (counter), tag {@value #FALLBACK}: the store could not decide or
 *   update, and what the gate did instead: {@code allow} (the request went through undecided),
 *   {@code refuse} (503), {@code ignore} (a shadow decision, or an update after the response such
 *   as a charge or a lease's release: the request was not affected).
 * <li>{@value #LEASES} (gauge), tag {@value #POLICY}: concurrency leases held now by requests this
 *   process admitted.
 * <li>{@value #QUEUE_WAITING} (gauge), {@value #QUEUE_ADMITTED} and {@value #QUEUE_TIMEOUTS}
 *   (counters), tag {@value #POLICY}: requests waiting now in a policy's queue ({@link Waiting}),
 *   admitted after waiting, refused after waiting.
 * <li>{@value #OBSERVATION} (an {@code Observation} per decided request, so a span where a tracing
 *   bridge is installed): low-cardinality {@value #ROUTE} (the route's template), {@value #POLICY}
 *   (the refusing policy, else the route's policies joined by commas), {@value #OUTCOME}
 *   ({@code allowed}, {@code refused}, {@code undecided}: the store failed and the request went
 *   through, {@code passed}: no policy applied, {@code failed}: a bug kept the gate from a verdict) and
 *   {@value #PROBLEM}; high-cardinality
 *   {@value #RETRY_AFTER} (seconds, on a refusal that states one) and {@value #STORE_LATENCY_KEY}
 *   (milliseconds); an event {@value #REFUSED_EVENT} on a refusal.
 * </ul>
 */
public final class HeadroomMeters {
  private HeadroomMeters() {}

  /** Decisions by policy, outcome and problem (counter). */
  public static final String DECISIONS = "headroom.decisions";
  /** The store's time to decide one request (timer). */
  public static final String STORE_LATENCY = "headroom.store.latency";
  /** Store failures, by the fallback applied (counter). */
  public static final String STORE_FAILURES = "headroom.store.failures";
  /** Concurrency leases held now, by policy (gauge). */
  public static final String LEASES = "headroom.leases.active";
  /** Requests waiting now in a policy's queue ({@link Waiting}), by policy (gauge). */
  public static final String QUEUE_WAITING = "headroom.queue.waiting";
  /** Requests admitted after waiting in a policy's queue, by policy (counter). */
  public static final String QUEUE_ADMITTED = "headroom.queue.admitted";
  /** Requests refused after waiting in a policy's queue, by policy (counter). */
  public static final String QUEUE_TIMEOUTS = "headroom.queue.timeouts";
  /** The observation of one decision. */
  public static final String OBSERVATION = "headroom.decision";
  /** The event of a refusal, on the observation. */
  public static final String REFUSED_EVENT = "headroom.refused";

  /** Tag: the policy's name. */
  public static final String POLICY = "policy";
  /** Tag: what the decision was. */
  public static final String OUTCOME = "outcome";
  /** Tag: the problem type a refusal is sent as; {@value #NONE} otherwise. */
  public static final String PROBLEM = "problem";
  /** Tag: what the gate did when the store failed. */
  public static final String FALLBACK = "fallback";
  /** Key: the route's template. */
  public static final String ROUTE = "route";
  /** Key: the Retry-After of a refusal, in seconds. */
  public static final String RETRY_AFTER = "retry.after";
  /** Key: the store's latency for this decision, in milliseconds. */
  public static final String STORE_LATENCY_KEY = "store.latency.ms";
  /** The problem of what was not refused. */
  public static final String NONE = "none";
  /** The problem of a request larger than the whole quota (413): its error token, in kebab-case. */
  static final String EXCEEDS_LIMIT = "request-exceeds-limit";
  /** The problem of a plan's 401. */
  static final String INVALID_CREDENTIAL = "invalid-credential";
  /** The policy of plan credential rejections. */
  public static final String PLAN_POLICY = "plan";
}
