package dev.headroom.enforcement;

import dev.headroom.Decision;
import dev.headroom.QuotaPolicy;
import dev.headroom.http.HeaderNames;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.Map;
import java.util.StringJoiner;

/**
 * {@link Telemetry} in Micrometer: the meters ({@link GateMeters}, when a {@code MeterRegistry} is
 * given) and one {@link Observation} per decision (when an {@code ObservationRegistry} is given),
 * named and tagged as {@link HeadroomMeters} says. The observation is started when the route
 * matches, so it is a child of whatever observation is current on that thread (the server's
 * request), and stopped with the verdict, on whatever thread gave it. Thread-safe.
 */
final class MicrometerTelemetry implements Telemetry {
  private final GateMeters meters;
  private final ObservationRegistry observations;

  /** Either may be null, not both. */
  MicrometerTelemetry(GateMeters meters, ObservationRegistry observations) {
    this.meters = meters;
    this.observations = observations;
  }

  @Override
  public GateListener listener() {
    return meters == null ? GateListener.none() : meters;
  }

  @Override
  public void storeFailed(String fallback) {
    if (meters != null) {
      meters.storeFailed(fallback);
    }
  }

  @Override
  public void leasesTaken(Decision decision) {
    if (meters != null) {
      meters.leasesTaken(decision);
    }
  }

  @Override
  public void leasesReleased(Decision decision) {
    if (meters != null) {
      meters.leasesReleased(decision);
    }
  }

  @Override
  public Record begin(RouteRules route, GateRequest request) {
    if (observations == null || observations.isNoop()) {
      return timerOnly; // nothing kept per decision: no allocation (a registry without handlers is a no-op)
    }
    Observation o = Observation.createNotStarted(HeadroomMeters.OBSERVATION, observations)
        .contextualName("headroom " + route.template())
        .lowCardinalityKeyValue(HeadroomMeters.ROUTE, route.template())
        .lowCardinalityKeyValue(HeadroomMeters.POLICY, policies(route))
        .start();
    return new DecisionRecord(o);
  }

  /** The record of a gate without observations: the store's latency goes to the timer, nothing else is kept. */
  private final Record timerOnly = new Record() {
    @Override
    public void storeAnswered(long nanos) {
      if (meters != null) {
        meters.storeLatency(nanos);
      }
    }

    @Override
    public void end(Verdict verdict, Throwable failure) {}
  };

  private static String policies(RouteRules route) {
    StringJoiner j = new StringJoiner(",");
    for (QuotaPolicy p : route.policies()) {
      j.add(p.name());
    }
    return j.toString();
  }

  /** One decision: its store latency for the timer, and its observation if any. Not shared. */
  private final class DecisionRecord implements Record {
    private final Observation observation; // never null
    private long storeNanos = -1;

    DecisionRecord(Observation observation) {
      this.observation = observation;
    }

    @Override
    public void storeAnswered(long nanos) {
      storeNanos = nanos;
      if (meters != null) {
        meters.storeLatency(nanos);
      }
    }

    @Override
    public void end(Verdict verdict, Throwable failure) {
      Observation o = observation;
      if (failure != null) {
        // the same keys as every other decision's, so that a meter made of the observation keeps one set of tags
        o.error(failure);
        o.lowCardinalityKeyValue(HeadroomMeters.OUTCOME, "failed");
        o.lowCardinalityKeyValue(HeadroomMeters.PROBLEM, HeadroomMeters.NONE);
      } else {
        String outcome = switch (verdict.kind()) {
          case ADMIT -> "allowed";
          case PASS -> "passed";
          case UNDECIDED -> "undecided";
          case ANSWER -> "refused";
        };
        o.lowCardinalityKeyValue(HeadroomMeters.OUTCOME, outcome);
        String problem = HeadroomMeters.NONE;
        if (verdict.kind() == Verdict.Kind.ANSWER) {
          GateResponse r = verdict.answer();
          problem = r.problem() == null ? "status-" + r.status() : r.problem();
          if (r.policy() != null) {
            o.lowCardinalityKeyValue(HeadroomMeters.POLICY, r.policy());
          }
          String retryAfter = retryAfter(r);
          if (retryAfter != null) {
            o.highCardinalityKeyValue(HeadroomMeters.RETRY_AFTER, retryAfter);
          }
          o.event(Observation.Event.of(HeadroomMeters.REFUSED_EVENT, "refused " + r.status() + " " + problem
              + (retryAfter == null ? "" : ", retry after " + retryAfter + " s")));
        }
        o.lowCardinalityKeyValue(HeadroomMeters.PROBLEM, problem);
      }
      if (storeNanos >= 0) {
        o.highCardinalityKeyValue(HeadroomMeters.STORE_LATENCY_KEY, Double.toString(storeNanos / 1e6));
      }
      o.stop();
    }
  }

  private static String retryAfter(GateResponse r) {
    for (Map.Entry<String, String> f : r.fields()) {
      if (f.getKey().equalsIgnoreCase(HeaderNames.RETRY_AFTER)) {
        return f.getValue();
      }
    }
    return null;
  }
}
