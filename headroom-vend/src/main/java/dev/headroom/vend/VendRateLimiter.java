package dev.headroom.vend;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.headroom.Acquisition;
import dev.headroom.Decision;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaLimiter;
import dev.headroom.vend.format.RateLimitExtension;
import dev.headroom.vend.format.Scope;
import dev.headroom.vend.format.VendError;
import dev.headroom.vend.format.VendJson;
import dev.headroom.vend.format.VendRequest;
import dev.headroom.vend.format.VendRequestException;
import dev.headroom.vend.format.VendRequestReader;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The vend rate-limit extension (seed 003) on top of a {@link QuotaLimiter}: decides a call in every
 * applicable scope at once, and writes the extension data, the {@code RATE_LIMITED} refusal and
 * the {@code vend.capabilities} document.
 *
 * <pre>{@code
 * VendRateLimiter vend = VendRateLimiter.builder(limits)
 *     .limiter(QuotaLimiter.of(InMemoryStore.builder().build()))
 *     .build();
 * VendRequest call = VendRequestReader.standard().parse(body);          // 400 on bad envelopes
 * VendDecision d = vend.decide(call, CallIdentity.of(header("X-Vend-Caller"), userId));
 * if (!d.allowed()) {
 *   byte[] body = d.refuse(headers, response::addHeader);   // Retry-After, RateLimit fields
 *   respond(d.httpStatus(), body);                            // 429
 * } else {
 *   d.writeHeaders(headers, 200, response::addHeader);
 *   if (call.isCapabilities()) {
 *     respond(200, d.successResponse(vend.capabilities()));
 *   } else {
 *     try { respond(200, d.decorate(forward(body))); } finally { vend.release(d); }
 *   }
 * }
 * }</pre>
 *
 * <h2>Partitions</h2>
 * Each scope counts in its own partition: {@code global}; {@code service:<caller>};
 * {@code function:<function>}; {@code user:<user>}. A limit configured for one function adds
 * {@code @<function>} (so one policy reused for several functions counts each apart). A call whose
 * caller (or user) is unknown counts in the scope's one anonymous partition ({@code service?},
 * {@code user?}): omitting the caller never escapes the service limit, and all anonymous callers
 * share it.
 *
 * <p>Every scope is decided in one {@link QuotaLimiter#acquire(List)} call: all or nothing, so a call
 * refused in one scope consumes nothing in the others. Time is the store's {@code Ticker}. A
 * {@link dev.headroom.StoreException} propagates: whether to fail open or closed is the host's
 * choice.
 *
 * <p>Thread-safe and immutable.
 */
public final class VendRateLimiter {

  /** The default bound on an upstream response that gets extension data inserted: 1 MiB. */
  public static final int DEFAULT_MAX_RESPONSE_BYTES = 1 << 20;

  /** The header that carries {@code context.caller} for infrastructure (vend-notes.md). */
  public static final String CALLER_HEADER = "X-Vend-Caller";

  private final VendRateLimits limits;
  private final QuotaLimiter limiter;
  private final int maxResponseBytes;
  private final ObjectMapper reader;

  private VendRateLimiter(Builder b) {
    this.limits = b.limits;
    this.limiter = b.limiter;
    this.maxResponseBytes = b.maxResponseBytes;
    this.reader = VendJson.reader(b.maxResponseDepth);
  }

  /** Starts a limiter enforcing these limits. */
  public static Builder builder(VendRateLimits limits) {
    return new Builder(limits);
  }

  public VendRateLimits limits() {
    return limits;
  }

  /** The core limiter deciding the calls (for its store, or to emit headers). */
  public QuotaLimiter limiter() {
    return limiter;
  }

  /**
   * Decides a call in every applicable scope, consuming one request from each when allowed.
   *
   * @throws VendRequestException {@code INVALID_REQUEST} when the envelope names no caller and the
   *     {@code X-Vend-Caller} header is not a valid caller name
   * @throws dev.headroom.StoreException when the store cannot decide
   */
  public VendDecision decide(VendRequest request, CallIdentity identity) {
    Plan plan = plan(request, identity);
    Decision decision = plan.acquisitions.isEmpty() ? null : limiter.acquire(plan.acquisitions);
    return plan.decision(decision);
  }

  /**
   * {@link #decide(VendRequest, CallIdentity)} without blocking on a remote store: for event-loop
   * hosts (Netty, Vert.x). A bad header fails the stage with {@link VendRequestException}.
   */
  public CompletionStage<VendDecision> decideAsync(VendRequest request, CallIdentity identity) {
    Plan plan;
    try {
      plan = plan(request, identity);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    if (plan.acquisitions.isEmpty()) {
      return CompletableFuture.completedFuture(plan.decision(null));
    }
    return limiter.acquireAsync(plan.acquisitions).thenApply(plan::decision);
  }

  /** Releases the concurrency leases of a decision, if any; safe for any decision and twice. */
  public void release(VendDecision decision) {
    decision.decision().ifPresent(limiter::release);
  }

  /**
   * The {@code vend.capabilities} result (seed 003, "Discovery"): {@code service} when configured,
   * {@code extensions: [{urn, documentation?}]} and {@code rate_limits: [{scope, function?, limit,
   * window}]}. A fresh copy each call.
   */
  public ObjectNode capabilities() {
    ObjectNode result = VendJson.object();
    limits.service().ifPresent(s -> result.put("service", s));
    result.putArray("extensions").add(extensionDeclaration());
    ArrayNode rl = result.putArray("rate_limits");
    for (ScopeLimit l : limits.all()) {
      rl.add(l.toJson());
    }
    return result;
  }

  /**
   * An upstream's {@code vend.capabilities} response with this extension merged into its
   * {@code result}: the {@code extensions} entry is added (or, when present, given the configured
   * {@code documentation}), and {@code rate_limits} entries for the same scope and function are
   * replaced by the enforced ones, others kept. The response passes through unchanged when it is
   * larger than the bound, not JSON, or its {@code result} (or either array) has another type.
   * Values are kept exactly; whitespace is not.
   */
  public byte[] mergeCapabilities(byte[] upstreamResponse) {
    if (upstreamResponse.length > maxResponseBytes) {
      return upstreamResponse;
    }
    JsonNode root;
    try {
      root = reader.readTree(upstreamResponse);
    } catch (IOException e) {
      return upstreamResponse;
    }
    if (root == null || !root.isObject() || !root.path("result").isObject()) {
      return upstreamResponse;
    }
    ObjectNode result = (ObjectNode) root.get("result");
    JsonNode ext = result.get("extensions");
    JsonNode rl = result.get("rate_limits");
    if ((ext != null && !ext.isArray()) || (rl != null && !rl.isArray())) {
      return upstreamResponse;
    }
    ArrayNode extensions = ext == null ? result.putArray("extensions") : (ArrayNode) ext;
    ObjectNode mine = null;
    for (JsonNode e : extensions) {
      if (e.isObject() && RateLimitExtension.URN.equals(e.path("urn").textValue())) {
        mine = (ObjectNode) e;
        break;
      }
    }
    if (mine == null) {
      extensions.add(extensionDeclaration());
    } else {
      ObjectNode existing = mine;
      limits.documentation().ifPresent(d -> existing.put("documentation", d.toString()));
    }
    ArrayNode rateLimits = rl == null ? result.putArray("rate_limits") : (ArrayNode) rl;
    Set<String> enforced = new HashSet<>();
    for (ScopeLimit l : limits.all()) {
      enforced.add(l.scope().token() + '\u0000' + l.function().orElse(""));
    }
    for (int i = rateLimits.size() - 1; i >= 0; i--) {
      JsonNode e = rateLimits.get(i);
      String k = e.path("scope").asText("") + '\u0000' + e.path("function").asText("");
      if (enforced.contains(k)) {
        rateLimits.remove(i);
      }
    }
    for (ScopeLimit l : limits.all()) {
      rateLimits.add(l.toJson());
    }
    return VendJson.bytes(root);
  }

  private ObjectNode extensionDeclaration() {
    ObjectNode e = VendJson.object();
    e.put("urn", RateLimitExtension.URN);
    limits.documentation().ifPresent(d -> e.put("documentation", d.toString()));
    return e;
  }

  private Plan plan(VendRequest request, CallIdentity identity) {
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(identity, "identity");
    String caller = request.caller().orElse(null);
    if (caller == null && identity.callerHeader().isPresent()) {
      String h = identity.callerHeader().get();
      if (!VendRequestReader.validCaller(h)) {
        throw new VendRequestException(VendError.INVALID_REQUEST, CALLER_HEADER + " header: expected 1 to "
            + VendRequestReader.MAX_CALLER_LENGTH + " printable characters naming the calling service, got \""
            + VendJson.printable(h) + "\"", request.id(), request.protocolVersion());
      }
      caller = h;
    }
    String user = identity.user().orElse(null);
    List<ScopeLimit> applicable = limits.applicableTo(request.function());
    List<Acquisition> acquisitions = new ArrayList<>(applicable.size());
    for (ScopeLimit l : applicable) {
      acquisitions.add(Acquisition.of(l.policy(), partition(l, request.function(), caller, user)));
    }
    return new Plan(request, caller, user, applicable, acquisitions);
  }

  static PartitionKey partition(ScopeLimit limit, String function, String caller, String user) {
    String base;
    switch (limit.scope()) {
      case GLOBAL:
        base = "global";
        break;
      case SERVICE:
        base = caller == null ? "service?" : "service:" + caller;
        break;
      case FUNCTION:
        base = "function:" + function;
        break;
      case USER:
        base = user == null ? "user?" : "user:" + user;
        break;
      default:
        throw new IllegalStateException("scope " + limit.scope());
    }
    return PartitionKey.of(limit.function().isPresent() && limit.scope() != Scope.FUNCTION ? base + "@" + function : base);
  }

  /** What one call asks of the store, and how to read the answer. */
  private final class Plan {
    final VendRequest request;
    final String caller;
    final String user;
    final List<ScopeLimit> applicable;
    final List<Acquisition> acquisitions;

    Plan(VendRequest request, String caller, String user, List<ScopeLimit> applicable, List<Acquisition> acquisitions) {
      this.request = request;
      this.caller = caller;
      this.user = user;
      this.applicable = applicable;
      this.acquisitions = acquisitions;
    }

    VendDecision decision(Decision decision) {
      List<ScopeStatus> statuses = new ArrayList<>(applicable.size());
      if (decision != null) {
        for (int i = 0; i < applicable.size(); i++) {
          statuses.add(new ScopeStatus(applicable.get(i), decision.outcomes().get(i)));
        }
      }
      return new VendDecision(request, caller, user, decision, statuses, reader, maxResponseBytes);
    }
  }

  /** Builds a {@link VendRateLimiter}. */
  public static final class Builder {
    private final VendRateLimits limits;
    private QuotaLimiter limiter;
    private int maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES;
    private int maxResponseDepth = VendRequestReader.DEFAULT_MAX_DEPTH;

    private Builder(VendRateLimits limits) {
      if (limits == null) {
        throw new IllegalArgumentException("limits: expected VendRateLimits, got null");
      }
      this.limits = limits;
    }

    /** The core limiter (and through it the store and its ticker). Required. */
    public Builder limiter(QuotaLimiter limiter) {
      if (limiter == null) {
        throw new IllegalArgumentException("limiter: expected a QuotaLimiter, got null");
      }
      this.limiter = limiter;
      return this;
    }

    /**
     * Upstream responses larger than this pass through {@link VendDecision#decorate(byte[])} and
     * {@link #mergeCapabilities(byte[])} unchanged: 64 bytes to 64 MiB, default
     * {@link #DEFAULT_MAX_RESPONSE_BYTES}.
     */
    public Builder maxResponseBytes(int maxResponseBytes) {
      if (maxResponseBytes < 64 || maxResponseBytes > (64 << 20)) {
        throw new IllegalArgumentException("maxResponseBytes: expected 64 to " + (64 << 20) + " bytes, got "
            + maxResponseBytes);
      }
      this.maxResponseBytes = maxResponseBytes;
      return this;
    }

    /** Upstream responses nested deeper than this pass through unchanged: 4 to 1000, default 64. */
    public Builder maxResponseDepth(int maxResponseDepth) {
      if (maxResponseDepth < 4 || maxResponseDepth > 1000) {
        throw new IllegalArgumentException("maxResponseDepth: expected 4 to 1000, got " + maxResponseDepth);
      }
      this.maxResponseDepth = maxResponseDepth;
      return this;
    }

    /**
     * @throws IllegalArgumentException when no limiter was given
     */
    public VendRateLimiter build() {
      if (limiter == null) {
        throw new IllegalArgumentException("limiter: expected a QuotaLimiter, got nothing (limiter is required)");
      }
      return new VendRateLimiter(this);
    }
  }
}
