package dev.headroom.client;

import java.util.List;
import java.util.OptionalDouble;
import java.util.OptionalLong;

/**
 * When a request may be sent, for {@link BudgetTracker}: now, after a wait, or once an answer in
 * flight has come, given its scope's current budgets.
 *
 * <h2>How is this designed, and why?</h2>
 *
 * <p>A request is admitted when, for every budget it draws from, a unit is left (or comes back at
 * the reset), and the pacing's spacing has passed; the tracker's class comment gives the rules and
 * worked numbers, this class applies them to one scope at one instant. It keeps no state of its
 * own: what it decides is written into the scope and its budgets (units taken, a window restarted
 * at its reset), under the tracker's lock.
 *
 * <p>What happens at a budget's reset depends on what its {@code t} meant ({@link ResetMeaning}):
 * when it named the instant the quota is whole again (draft-ietf-httpapi-ratelimit-headers-09
 * section 4.1.2, every older dialect, {@code X-RateLimit-Reset}), or the budget is a fixed window
 * (whose window end both meanings name) or a token bucket whose {@code t} was seen to be its time
 * until full, a new window of {@code q} units starts there. When {@code t} named the instant more
 * quota is available (draft-10 and -11 section 4.1.2, the editor's draft's {@code w}), or may have
 * (a {@code RateLimit} list field, which draft-09 to -11 all write alike), only one unit more is sure
 * there: the units still counted go as before, and once they are spent the next request goes
 * alone, its answer saying what came back. Worked numbers: a token bucket of 10 per 5 s sends
 * {@code r=0;t=1} under draft-10 (its next token in half a second); reading that as draft-09 did, a
 * new window of ten at one second was nine refusals; read as more quota, one request goes, and
 * its answer ({@code r=1;t=1}) paces the rest. When nothing says when quota returns
 * ({@link ResetMeaning#UNSTATED}), the units stated go at once and, once spent, one request at a
 * time asks. Such a request goes knowing it may be refused: its permit says so
 * ({@link BudgetTracker.Permit#ask()}), and its refusal's Retry-After is then waited as it stands,
 * not doubled ({@link RetryPolicy#askDelay}), however many windows in a row it was refused in.
 */
final class SendTiming {

  private final Pacing pacing;
  private final Ceilings ceilings;

  SendTiming(Pacing pacing, Ceilings ceilings) {
    this.pacing = pacing;
    this.ceilings = ceilings;
  }

  /**
   * What a request of cost {@code cost} of scope {@code s}, drawing from its {@code active} budgets,
   * to {@code origin}, does at {@code now}: wait, wait for an answer, wait for a request of the
   * origin to leave the wire, or go (its units taken from the budgets, its place on the wire taken).
   */
  Wait decide(ScopeState s, OriginCapacity origin, List<TrackedBudget> active, RequestCost cost, long now) {
    if (now < s.blockedUntil) {
      return Wait.nanos(s.blockedUntil - now);
    }
    if (!origin.admits()) {
      // The origin said its capacity fell (OriginCapacity): at most its window on the wire, for
      // every caller of the origin, whatever the quotas would let through.
      return Wait.FOR_CAPACITY;
    }
    long wait = 0;
    // A scope never heard from goes one request at a time until its first response: it may carry
    // the fields that pace the rest.
    boolean probe = s.probeAfterBlock || !s.answered;
    OptionalDouble rate = ceilings.maxRequestsPerSecond();
    if (rate.isPresent() && s.lastAdmit != Long.MIN_VALUE) {
      long next = s.lastAdmit + (long) Math.ceil(1e9 / rate.getAsDouble());
      wait = Math.max(wait, next - now);
    }
    boolean waitForAnswer = false;
    if (s.entries.isEmpty()) {
      // Told nothing but refusals: what they taught of the window (RefusalWindow).
      long told = s.refusals.decide(now);
      if (told == RefusalWindow.ALONE) {
        probe = true;
      } else {
        wait = Math.max(wait, told);
      }
    }
    // Whether the request goes to ask a budget that may be spent and states no reset (below): its
    // refusal says only when to ask again, and does not escalate the retry's back-off.
    boolean ask = false;
    long hold;
    for (TrackedBudget e : active) {
      if (e.limitsConcurrency()) {
        // A concurrent-requests quota (draft-09 section 3.1.2): its units come back as requests
        // leave the wire, not at a reset. At most its cap on the wire (TrackedBudget#concurrencyCap);
        // the next request waits for an answer, or for a request to fail, which frees a unit as well.
        waitForAnswer |= s.inFlight() >= e.concurrencyCap;
        continue;
      }
      ObservedAlgorithm.Kind kind = e.kind();
      long need = e.drawn(cost);
      if (need == 0) {
        // A unit this request states no cost in: it draws nothing from the budget (RequestCost).
        continue;
      }
      if (e.probeAtReset) {
        // A reset (or window) beyond Ceilings#maxReset is not slept on (draft-09 section 8.5.1:
        // "implementing retries when the reset parameter exceeds ten minutes"): its requests go one
        // at a time, each alone, and the answer of each (its fields, or a refusal's Retry-After)
        // decides for the next. A 14-digit t no longer holds every caller for the ceiling.
        probe = true;
        continue;
      }
      if (!e.countsRequests()) {
        long unitWait = e.unitWait(need, now, s.inFlight(), s.inFlightCost(e.unit), Ceilings.nanos(ceilings.maxReset()));
        if (unitWait == TrackedBudget.UNIT_PROBE) {
          probe = true;
        } else if (unitWait == TrackedBudget.UNIT_FOR_ANSWER) {
          waitForAnswer = true;
        } else {
          wait = Math.max(wait, unitWait);
        }
        continue;
      }
      if (e.meaning == ResetMeaning.UNSTATED) {
        // Nothing says when quota returns: the units stated go at once. Once they are spent, or a
        // refusal's Retry-After (which said when to ask, not what comes back) has passed, one
        // request at a time, each alone, asks. No reset is stated, so no algorithm's model of it
        // (a refill credited, a reset bisected) applies: holding the last units to bisect a reset no
        // report narrows only moved the refusal that says it (its Retry-After, whole seconds
        // rounded up) later into its second, and the next window's first request as late (Azure
        // Resource Manager, 1.0 s into a 5 s window: 1.19x the ideal schedule in virtual time).
        if (e.remaining <= 0 || now >= e.resetAt) {
          // Past a refusal's Retry-After the request that asks goes at once; a budget spent within
          // its window asks at the fraction of a second its window opened at (TrackedBudget#askAt).
          long askAt = now < e.resetAt ? e.askAt(now) : now;
          if (s.inFlight() > 0) {
            waitForAnswer = true;
          } else if (askAt > now) {
            wait = Math.max(wait, askAt - now);
          } else {
            probe = true;
            ask = true;
          }
        }
        continue;
      }
      if (kind == ObservedAlgorithm.Kind.TOKEN_BUCKET) {
        e.creditRefill(now, s.inFlight());
      }
      // t said when more quota comes, not when it is whole (draft-10 and -11 section 4.1.2, or a
      // RateLimit field that may be either): at the reset, at least one unit more, no more known.
      boolean moreOnly = now >= e.resetAt && !e.resetRestoresQuota();
      if (now >= e.resetAt && !moreOnly) {
        if (e.quota < 0 || e.window <= 0 || e.window > Ceilings.nanos(ceilings.maxReset())) {
          // Nothing says what the next window holds or how long it lasts, or it lasts longer than
          // the client waits (Ceilings#maxReset): one request finds out.
          probe = true;
          continue;
        }
        if (e.quota <= s.inFlight()) {
          // Requests still in flight may all be counted in the new window: their answers say more.
          probe = true;
          continue;
        }
        // A new window of the known quota; requests still in flight may be counted in it.
        e.remaining = e.quota - s.inFlight();
        long periods = (now - e.resetAt) / e.window + 1;
        e.resetAt = Ceilings.saturatingAdd(e.resetAt, Ceilings.saturatingMultiply(periods, e.window));
        e.lastAdmit = now;
        // A reset learnt from the reports (or, adaptively, any reset of an algorithm not yet
        // recognised) is confirmed by one request before the rest of the window goes.
        e.confirm = kind == ObservedAlgorithm.Kind.FIXED_WINDOW
            || (pacing == Pacing.ADAPTIVE && kind == ObservedAlgorithm.Kind.UNKNOWN);
      }
      if (pacing == Pacing.ADAPTIVE && kind == ObservedAlgorithm.Kind.REFILLING
          && e.window <= Ceilings.nanos(ceilings.maxReset())) {
        // A sliding window, modelled from the client's own requests (its window stated or inferred,
        // WindowInference): wait for the unit it gives back.
        long at = e.nextAllowed(now, s.inFlight());
        if (at == Long.MAX_VALUE && s.inFlight() > 0) {
          waitForAnswer = true;
          continue;
        } else if (at >= 0 && at != Long.MAX_VALUE) {
          wait = Math.max(wait, at - now);
          continue;
        }
      }
      if (e.remaining <= 0) {
        if (s.inFlight() > 0) {
          // Requests on the wire were taken off the last report; their answers may give units back.
          waitForAnswer = true;
        } else if (moreOnly) {
          // The unit that came back goes alone, and its answer says what else did.
          probe = true;
        } else {
          wait = Math.max(wait, e.nextUnit(now) - now);
        }
        continue;
      }
      if (e.confirm) {
        // The request that confirms a restarted window goes at once, the others after its answer.
        waitForAnswer |= s.inFlight() > 0;
        continue;
      }
      if (spacesEvenly(kind)) {
        // Adaptively, a first window that may be short is not spread past its earliest end.
        long next = Ceilings.saturatingAdd(e.lastAdmit,
            EvenSpacing.interval(e, pacing == Pacing.ADAPTIVE ? e.firstWindow(now) : Long.MAX_VALUE));
        wait = Math.max(wait, next - now);
      } else if (pacing == Pacing.ADAPTIVE && kind == ObservedAlgorithm.Kind.FIXED_WINDOW
          && (hold = ResetBisection.hold(e, s.clock, now, s.inFlight())) != 0) {
        // The window's last units, each sent alone where its answer halves what is known of the reset.
        if (hold == ResetBisection.FOR_ANSWER) {
          waitForAnswer = true;
        } else {
          wait = Math.max(wait, hold);
        }
      } else if (pacing == Pacing.ADAPTIVE && e.remaining == 1 && kind == ObservedAlgorithm.Kind.FIXED_WINDOW) {
        // The window's last unit, held back until it tells whether the windows are aligned.
        OptionalLong probeAt = e.seen.alignmentProbe();
        if (probeAt.isPresent() && probeAt.getAsLong() > now && probeAt.getAsLong() < e.seen.low()) {
          wait = Math.max(wait, probeAt.getAsLong() - now);
        }
      }
    }
    if (wait > 0) {
      return Wait.nanos(wait);
    }
    if ((probe || waitForAnswer) && s.inFlight() > 0) {
      return Wait.FOR_RESPONSE;
    }
    long seq = ++s.lastSeq;
    for (TrackedBudget e : active) {
      if (!e.countsRequests()) {
        if (now < e.resetAt) {
          e.remaining = Math.max(0, e.remaining - e.drawn(cost));
        }
        continue;
      }
      if (now < e.resetAt) {
        e.remaining--;
      }
      e.lastAdmit = now;
      e.admitted(seq, now);
    }
    boolean alone = s.inFlight.isEmpty();
    s.inFlight.add(seq);
    if (!cost.isNone()) {
      s.costs.put(seq, cost);
    }
    s.lastAdmit = now;
    s.refusals.admitted();
    return Wait.admitted(new BudgetTracker.Permit(s, probe, ask, seq, alone, s.answeredCount, now, cost, origin.admit()));
  }

  /** Whether admissions against a budget of this kind are spaced ({@link EvenSpacing#interval}) or go at once. */
  private boolean spacesEvenly(ObservedAlgorithm.Kind kind) {
    switch (pacing) {
      case EVEN:
        return true;
      case BURST:
        return false;
      default:
        return kind == ObservedAlgorithm.Kind.UNKNOWN || kind == ObservedAlgorithm.Kind.REFILLING;
    }
  }

  /**
   * What {@link #decide} decided: wait {@code nanos}, or for a response of the scope, or for a
   * request of the origin to leave the wire ({@code forCapacity}), or go with {@code admitted}.
   */
  record Wait(long nanos, boolean forResponse, boolean forCapacity, BudgetTracker.Permit admitted) {
    static final Wait FOR_RESPONSE = new Wait(0, true, false, null);
    static final Wait FOR_CAPACITY = new Wait(0, false, true, null);

    static Wait nanos(long nanos) {
      return new Wait(nanos, false, false, null);
    }

    static Wait admitted(BudgetTracker.Permit p) {
      return new Wait(0, false, false, p);
    }
  }
}
