package dev.headroom.gateway.config;

import java.time.Duration;

/**
 * Progressive blocking (Graceful Boundaries section 2, "Retry behavior guidance"): a caller that
 * sends {@code threshold} more requests while it is told to wait is blocked for {@code block}
 * and told {@code abnormal-usage-detected}.
 */
public record Escalation(int threshold, Duration block) {}
