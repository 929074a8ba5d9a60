package dev.headroom.vend;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.headroom.Decision;
import dev.headroom.PolicyOutcome;
import dev.headroom.http.headers.RateLimitHeaders;
import dev.headroom.vend.format.RateLimitExtension;
import dev.headroom.vend.format.Scope;
import dev.headroom.vend.format.VendDuration;
import dev.headroom.vend.format.VendError;
import dev.headroom.vend.format.VendJson;
import dev.headroom.vend.format.VendRequest;
import dev.headroom.vend.format.VendResponses;
import dev.headroom.vend.internal.ExtensionSplice;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.BiConsumer;

/**
 * The rate-limit answer for one vend call: whether it may proceed, where it stands in each scope,
 * and the bytes to send (seed 003, "Behavior").
 *
 * <p>Allowed: forward the call, then pass the upstream's response through {@link #decorate(byte[])}
 * (or answer locally with {@link #successResponse(JsonNode)}). Refused: answer
 * {@link #httpStatus()} (429) with {@link #errorResponse()} and {@code Retry-After:
 * }{@link #retryAfterSeconds()}; that number is {@code details.retry_after.value} of the body.
 *
 * <p>Header fields come from headroom-http's {@link RateLimitHeaders} (the dialects a route chose):
 * {@link #writeHeaders} for an allowed call, {@link #refuse} for a refused one, which writes
 * {@code Retry-After} and the RateLimit fields and returns the body whose
 * {@code details.retry_after.value} is the very {@code Retry-After} written (jitter included, seed
 * 003 "Retry-After Header"). {@link #decision()} is the core {@link Decision} for hosts that emit
 * headers another way. Extension data is
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

  /**
   * The {@code RATE_LIMITED} response envelope telling the client to wait {@code retryAfter}
   * (rounded up to whole seconds): for a {@code Retry-After} that was jittered by the header
   * emitter, so that body and header agree.
   *
   * @throws IllegalStateException when the call was allowed
   * @throws IllegalArgumentException when {@code retryAfter} is shorter than the decision's: a
   *     client is never told to come back before the quota allows
   */
  public byte[] errorResponse(Duration retryAfter) {
    if (error == null) {
      throw new IllegalStateException("errorResponse: the call " + request.id() + " was allowed; "
          + "expected a refused decision");
    }
    long seconds = VendDuration.of(retryAfter).toDuration().getSeconds();
    if (seconds < decision.retryAfterSeconds()) {
      throw new IllegalArgumentException("retryAfter: expected at least " + decision.retryAfterSeconds()
          + " seconds (the decision's), got " + retryAfter);
    }
    ObjectNode details = error.details().orElseThrow();
    details.set("retry_after", VendDuration.inSeconds(seconds).toJson());
    VendError jittered = VendError.of(error.code(), error.message(), true, details);
    return VendResponses.error(request.protocolVersion(), request.id(), jittered, data);
  }

  /**
   * For an allowed call: writes the RateLimit fields of {@link #decision()} for a response of
   * {@code status} through {@code sink} (one header line per call). Writes nothing when no limit
   * applies.
   */
  public void writeHeaders(RateLimitHeaders headers, int status, BiConsumer<String, String> sink) {
    if (decision != null) {
      headers.write(decision, status, sink);
    }
  }

  /**
   * For a refused call: writes {@code Retry-After} and the RateLimit fields for a 429 through
   * {@code sink}, and returns the {@code RATE_LIMITED} body whose {@code details.retry_after.value}
   * equals the {@code Retry-After} written. The emitter must write Retry-After (its default).
   *
   * @throws IllegalStateException when the call was allowed
   */
  public byte[] refuse(RateLimitHeaders headers, BiConsumer<String, String> sink) {
    if (error == null) {
      throw new IllegalStateException("refuse: the call " + request.id() + " was allowed; expected a refused decision");
    }
    Duration retryAfter = headers.write(decision, httpStatus(), sink).orElse(decision.retryAfter());
    return errorResponse(retryAfter);
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
    ObjectNode data = VendJson.object();
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
    ObjectNode details = VendJson.object();
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
