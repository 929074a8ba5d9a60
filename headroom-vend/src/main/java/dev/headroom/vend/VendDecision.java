package dev.headroom.vend;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.headroom.Decision;
import dev.headroom.PolicyOutcome;
import dev.headroom.vend.internal.ExtensionSplice;
import dev.headroom.vend.internal.Json;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import java.util.Optional;

/**
 * The rate-limit answer for one vend call: whether it may proceed, where it stands in each scope,
 * and the bytes to send (seed 003, "Behavior").
 *
 * <p>Allowed: forward the call, then pass the upstream's response through {@link #decorate(byte[])}
 * (or answer locally with {@link #successResponse(JsonNode)}). Refused: answer
 * {@link #httpStatus()} (429) with {@link #errorResponse()} and {@code Retry-After:
 * }{@link #retryAfterSeconds()}; that number is {@code details.retry_after.value} of the body.
 *
 * <p>RateLimit header fields are the caller's to emit, from {@link #decision()} (the core
 * {@link Decision} of every policy), with headroom-http's header dialects. Extension data is
 * present only when the request declared {@link RateLimitExtension#URN}; the refusal itself and its
 * status do not depend on the declaration.
 *
 * <p>Immutable.
 */
public final class VendDecision {

  private final VendRequest request;
  private final String caller;
  private final String user;
  private final Decision decision;
  private final List<ScopeStatus> scopes;
  private final ObjectNode data;
  private final VendError error;
  private final ObjectMapper reader;
  private final int maxResponseBytes;

  VendDecision(VendRequest request, String caller, String user, Decision decision,
      List<ScopeStatus> scopes, ObjectMapper reader, int maxResponseBytes) {
    this.request = request;
    this.caller = caller;
    this.user = user;
    this.decision = decision;
    this.scopes = List.copyOf(scopes);
    this.reader = reader;
    this.maxResponseBytes = maxResponseBytes;
    this.data = request.declaresRateLimit() ? extensionData(request, this.scopes) : null;
    this.error = decision != null && !decision.allowed() ? rateLimited(request, decision, this.scopes) : null;
  }

  /** The call decided. */
  public VendRequest request() {
    return request;
  }

  /** The calling service counted: {@code context.caller}, else {@code X-Vend-Caller}; empty when neither. */
  public Optional<String> caller() {
    return Optional.ofNullable(caller);
  }

  /** The user counted, as the host supplied it. */
  public Optional<String> user() {
    return Optional.ofNullable(user);
  }

  /**
   * The core decision of every applicable policy, for the RateLimit header fields; empty when no
   * limit applies to the call's function.
   */
  public Optional<Decision> decision() {
    return Optional.ofNullable(decision);
  }

  /** Whether the call may proceed. */
  public boolean allowed() {
    return error == null;
  }

  /** 429 when refused, 200 otherwise (the status of the responses this class builds). */
  public int httpStatus() {
    return error == null ? 200 : error.httpStatus();
  }

  /**
   * When refused, the {@code Retry-After} value in seconds (at least 1), equal to
   * {@code details.retry_after.value}; 0 when allowed.
   */
  public long retryAfterSeconds() {
    return error == null ? 0 : decision.retryAfterSeconds();
  }

  /** Where the call stands in each applicable scope, in scope order. */
  public List<ScopeStatus> scopes() {
    return scopes;
  }

  /** The {@code RATE_LIMITED} error, when refused. */
  public Optional<VendError> error() {
    return Optional.ofNullable(error);
  }

  /**
   * A copy of the extension's {@code data}, when the request declared the extension: the
   * single-scope form ({@code limit ... scope, warning?}) when one scope is reported, the
   * {@code scopes} object keyed by scope when several are (seed 003, "Multiple Scopes"). When the
   * request's {@code options.scope} names an applicable scope, only that one is reported. When no
   * limit applies to the function, it is {@code {"scopes": {}}}.
   */
  public Optional<ObjectNode> extensionData() {
    return Optional.ofNullable(data).map(ObjectNode::deepCopy);
  }

  /**
   * The {@code RATE_LIMITED} response envelope (seed 003, "Rate Limited Error"), with extension data
   * when declared.
   *
   * @throws IllegalStateException when the call was allowed
   */
  public byte[] errorResponse() {
    if (error == null) {
      throw new IllegalStateException("errorResponse: the call " + request.id() + " was allowed; "
          + "expected a refused decision");
    }
    return VendResponses.error(request.protocolVersion(), request.id(), error, data);
  }

  /** A success envelope with this result and, when declared, the extension data. */
  public byte[] successResponse(JsonNode result) {
    return VendResponses.success(request.protocolVersion(), request.id(), result, data);
  }

  /**
   * The upstream's response with the extension data inserted, when the request declared the
   * extension; otherwise {@code upstreamResponse} itself. Insertion preserves every byte of the
   * upstream document (see {@code ExtensionSplice}); a response larger than the configured bound,
   * not a JSON object, or whose {@code extensions} is not an array passes through unchanged.
   */
  public byte[] decorate(byte[] upstreamResponse) {
    if (data == null) {
      return upstreamResponse;
    }
    return ExtensionSplice.insert(reader, upstreamResponse, maxResponseBytes, VendResponses.entry(data.deepCopy()));
  }

  private static ObjectNode extensionData(VendRequest request, List<ScopeStatus> scopes) {
    Optional<Scope> wanted = request.requestedScope();
    if (wanted.isPresent()) {
      for (ScopeStatus s : scopes) {
        if (s.scope() == wanted.get()) {
          return s.toJson(true);
        }
      }
    }
    if (scopes.size() == 1) {
      return scopes.get(0).toJson(true);
    }
    ObjectNode data = Json.object();
    ObjectNode byScope = data.putObject("scopes");
    for (ScopeStatus s : scopes) {
      byScope.set(s.scope().token(), s.toJson(false));
    }
    return data;
  }

  private static VendError rateLimited(VendRequest request, Decision decision, List<ScopeStatus> scopes) {
    PolicyOutcome worst = decision.mostConstraining();
    ScopeStatus status = scopes.get(0);
    for (ScopeStatus s : scopes) {
      if (s.outcome() == worst) {
        status = s;
      }
    }
    ObjectNode details = Json.object();
    details.put("limit", status.limit());
    details.put("used", status.used());
    details.set("window", status.window().toJson());
    details.set("retry_after", VendDuration.inSeconds(decision.retryAfterSeconds()).toJson());
    details.put("scope", status.scope().token());
    details.put("function", request.function());
    return VendError.of(VendError.RATE_LIMITED, "Rate limit exceeded for " + request.function(), true, details);
  }

  @Override
  public String toString() {
    return "VendDecision{" + request.id() + " " + request.function() + (allowed() ? " allowed " : " refused ") + scopes + "}";
  }
}
