package dev.headroom.enforcement;

import java.util.Objects;

/**
 * What the {@link Gate} decided for a request, and so what the front end does:
 * <ul>
 * <li>{@link Kind#PASS}: no route limits the request; the application answers it untouched.
 * <li>{@link Kind#UNDECIDED}: the store could not decide and the gate lets requests through
 *   ({@link Gate.StoreFailureMode#ALLOW}); the application answers it without RateLimit fields.
 * <li>{@link Kind#ANSWER}: the gate answers itself ({@link #answer()}): a refusal or the discovery
 *   document; the application is not called.
 * <li>{@link Kind#ADMIT}: allowed; the application answers, with the RateLimit fields written for
 *   its status when the response is committed, and {@link Admission#complete} (or
 *   {@link Admission#completeAsync}) once the response is complete ({@link #admission()}).
 * </ul>
 * Immutable.
 */
public final class Verdict {

  /** The kinds of verdict. */
  public enum Kind {
    /** No route limits the request. */
    PASS,
    /** The store could not decide; the request goes through without fields. */
    UNDECIDED,
    /** The gate answers the request itself. */
    ANSWER,
    /** Allowed: the application answers, with fields. */
    ADMIT
  }

  static final Verdict PASS = new Verdict(Kind.PASS, null, null);
  static final Verdict UNDECIDED = new Verdict(Kind.UNDECIDED, null, null);

  private final Kind kind;
  private final GateResponse answer;
  private final Admission admission;

  private Verdict(Kind kind, GateResponse answer, Admission admission) {
    this.kind = kind;
    this.answer = answer;
    this.admission = admission;
  }

  static Verdict answer(GateResponse answer) {
    return new Verdict(Kind.ANSWER, Objects.requireNonNull(answer), null);
  }

  static Verdict admit(Admission admission) {
    return new Verdict(Kind.ADMIT, null, Objects.requireNonNull(admission));
  }

  /** What to do. */
  public Kind kind() {
    return kind;
  }

  /**
   * The gate's own response.
   *
   * @throws IllegalStateException unless the kind is {@link Kind#ANSWER}
   */
  public GateResponse answer() {
    if (answer == null) {
      throw new IllegalStateException("verdict: " + kind + " has no answer; expected ANSWER");
    }
    return answer;
  }

  /**
   * The admitted request's fields and completion.
   *
   * @throws IllegalStateException unless the kind is {@link Kind#ADMIT}
   */
  public Admission admission() {
    if (admission == null) {
      throw new IllegalStateException("verdict: " + kind + " has no admission; expected ADMIT");
    }
    return admission;
  }

  @Override
  public String toString() {
    return kind + (answer != null ? " " + answer : "");
  }
}
