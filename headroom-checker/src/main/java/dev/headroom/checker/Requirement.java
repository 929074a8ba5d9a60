package dev.headroom.checker;

import java.util.List;

/**
 * One conformance requirement with the evidence for or against it.
 *
 * @param level the level it belongs to
 * @param name what is required
 * @param status whether it was met
 * @param evidence the requests and facts that decided it
 */
public record Requirement(Level level, String name, Status status, List<String> evidence) {

  public Requirement {
    evidence = List.copyOf(evidence);
  }

  /** Met, not met, or not observable in this run. */
  public enum Status {
    PASS,
    FAIL,
    /** Nothing observed could decide it (no refusal provoked, for instance); see the evidence. */
    UNVERIFIED
  }
}
