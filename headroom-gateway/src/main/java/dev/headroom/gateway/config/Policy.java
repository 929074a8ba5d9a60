package dev.headroom.gateway.config;

import dev.headroom.Partitioning;
import dev.headroom.QuotaPolicy;
import dev.headroom.enforcement.Waiting;
import dev.headroom.http.body.PolicyTexts;
import java.util.Optional;

/**
 * A quota policy and how it speaks: its partitioning ({@code client-ip}, {@code header:NAME},
 * {@code api-key}, {@code route}, {@code global}; read once, the value {@code quota} holds), its texts (the {@code why} of its refusals, an
 * optional description and limit type for discovery, constructive guidance URLs; validated by
 * headroom-http when the file is read), escalation, its queue (requests it refuses wait for their
 * turn up to {@code maxWait}; {@link Waiting}), and its rules (allow lists, what it counts,
 * when it applies, shadow mode).
 */
public record Policy(
    QuotaPolicy quota,
    Partitioning partition,
    PolicyTexts texts,
    Optional<Escalation> escalation,
    Optional<Waiting> queue,
    PolicyRules rules) {

  public String name() {
    return quota.name();
  }
}
