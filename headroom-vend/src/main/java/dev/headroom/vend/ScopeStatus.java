package dev.headroom.vend;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.headroom.PolicyOutcome;
import dev.headroom.vend.format.RateLimitExtension;
import dev.headroom.vend.format.Scope;
import dev.headroom.vend.format.VendDuration;
import dev.headroom.vend.format.VendJson;
import java.util.Objects;

/**
 * Where a call stands in one scope (seed 003, "Data (Response)"): {@code limit}, {@code used},
 * {@code remaining}, {@code window}, {@code resets_in}, and whether a {@code warning} is due.
 *
 * <ul>
 *   <li>{@code limit} is the policy's quota {@code q}; {@code remaining} is {@code r} after this
 *       call (before it, when the call was refused and consumed nothing); {@code used} is
 *       {@code limit - remaining}.
 *   <li>{@code window} is the policy's window; {@code resets_in} is {@code t}, the time until the
 *       quota is whole again, rounded up to whole seconds; both in the largest unit that divides
 *       them ({@link VendDuration#of(java.time.Duration)}).
 *   <li>the warning is due when less than 10% of the limit remains and this scope did not refuse
 *       the call: a refused scope is reported by the {@code RATE_LIMITED} error instead, as in the
 *       seed's "Rate Limited Error" example, whose data carries no warning.
 * </ul>
 * Immutable.
 */
public final class ScopeStatus {

  private final ScopeLimit limit;
  private final PolicyOutcome outcome;

  ScopeStatus(ScopeLimit limit, PolicyOutcome outcome) {
    this.limit = Objects.requireNonNull(limit);
    this.outcome = Objects.requireNonNull(outcome);
  }

  public Scope scope() {
    return limit.scope();
  }

  /** The configured limit that applied. */
  public ScopeLimit scopeLimit() {
    return limit;
  }

  /** The core's outcome for this scope's policy and partition. */
  public PolicyOutcome outcome() {
    return outcome;
  }

  public long limit() {
    return outcome.policy().quota();
  }

  public long remaining() {
    return outcome.remaining();
  }

  public long used() {
    return limit() - remaining();
  }

  public VendDuration window() {
    return VendDuration.of(outcome.policy().window());
  }

  public VendDuration resetsIn() {
    return VendDuration.ofSeconds(outcome.resetSeconds());
  }

  /** Whether this scope refused the call. */
  public boolean refused() {
    return !outcome.allowed();
  }

  /** Whether the data carries {@link RateLimitExtension#WARNING} for this scope. */
  public boolean warning() {
    return !refused() && RateLimitExtension.nearlyExhausted(remaining(), limit());
  }

  /**
   * The data object: {@code limit, used, remaining, window, resets_in}, then {@code scope} when
   * {@code withScope} (the single-scope form), then {@code warning} when due.
   */
  public ObjectNode toJson(boolean withScope) {
    ObjectNode o = VendJson.object();
    o.put("limit", limit());
    o.put("used", used());
    o.put("remaining", remaining());
    o.set("window", window().toJson());
    o.set("resets_in", resetsIn().toJson());
    if (withScope) {
      o.put("scope", scope().token());
    }
    if (warning()) {
      o.put("warning", RateLimitExtension.WARNING);
    }
    return o;
  }

  @Override
  public String toString() {
    return scope().token() + ": " + used() + "/" + limit() + " resets in " + resetsIn() + (refused() ? " refused" : "");
  }
}
