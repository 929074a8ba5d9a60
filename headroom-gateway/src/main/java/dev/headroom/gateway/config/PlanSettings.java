package dev.headroom.gateway.config;

import dev.headroom.enforcement.plan.Plans;

/**
 * {@code plans}: the service's plans (each a set of policy overrides, smallest first, and the
 * fallback plan), checked against the policies when the file is read, and where a request's plan
 * comes from.
 */
public record PlanSettings(Plans plans, PlanSource resolver) {}
