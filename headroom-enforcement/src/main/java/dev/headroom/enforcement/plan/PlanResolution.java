package dev.headroom.enforcement.plan;

import java.util.Objects;

/**
 * What a {@link PlanResolver} found for a request. Every outcome has a declared consequence, so
 * that no failure leaves a caller unlimited nor answers 500 ({@link Plans#select}):
 * <ul>
 *   <li>{@link Named}: the plan of the caller's identity; a name the configuration does not know
 *       gets the fallback plan (and a warning);
 *   <li>{@link Anonymous}: the request presents no identity the resolver reads, or one it does not
 *       know: the fallback plan;
 *   <li>{@link Unavailable}: the resolver could not answer in time (its database slow or down):
 *       the fallback plan, and a warning;
 *   <li>{@link Rejected}: the request presents a credential that is invalid (a JWT that is
 *       malformed, expired, not yet valid, for another audience, badly signed): 401 with a
 *       Graceful Boundaries body of {@code error}, {@code detail} and {@code why}.
 * </ul>
 */
public sealed interface PlanResolution {

  /** No identity, or one the resolver does not know. */
  static PlanResolution anonymous() {
    return Anonymous.INSTANCE;
  }

  /** The caller's plan, by name. */
  record Named(String plan) implements PlanResolution {
    public Named {
      Objects.requireNonNull(plan, "plan");
    }
  }

  /** No identity, or one the resolver does not know: the fallback plan. */
  enum Anonymous implements PlanResolution {
    INSTANCE
  }

  /** The resolver could not answer (timeout, database down, SQL error): the fallback plan. */
  record Unavailable(String reason) implements PlanResolution {
    public Unavailable {
      Objects.requireNonNull(reason, "reason");
    }
  }

  /**
   * The credential presented is invalid: the request is refused with 401.
   *
   * @param error a stable machine-readable code, such as {@code invalid_token}
   * @param detail what was wrong with this credential, never quoting it
   * @param why why the service checks it
   */
  record Rejected(String error, String detail, String why) implements PlanResolution {
    public Rejected {
      Objects.requireNonNull(error, "error");
      Objects.requireNonNull(detail, "detail");
      Objects.requireNonNull(why, "why");
    }
  }
}
