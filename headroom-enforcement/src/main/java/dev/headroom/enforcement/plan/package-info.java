/**
 * Plans: a {@link dev.headroom.enforcement.plan.Plan} is a set of
 * {@link dev.headroom.enforcement.plan.PolicyOverride}s by policy name;
 * {@link dev.headroom.enforcement.plan.Plans} builds every plan's policies once and selects the plan
 * enforced for what a {@link dev.headroom.enforcement.plan.PlanResolver} (the SPI headroom-plans
 * implements) found, a {@link dev.headroom.enforcement.plan.PlanResolution}.
 *
 * <h2>How is this designed, and why?</h2>
 * <ul>
 * <li>Each plan's version of a policy is named {@code base:plan}: stores key counters by policy
 * name, so plans never share a counter they size differently, and the RateLimit fields name the
 * caller's plan with no new field. A policy a plan leaves alone is the base policy, counters
 * shared.
 * <li>Every resolution has a declared consequence ({@code Named}, {@code Anonymous},
 * {@code Unavailable}, {@code Rejected}: 401); a named plan the catalog lacks, anonymous and
 * unavailable callers all get the fallback plan. The front ends add what no resolver can promise:
 * a thrown exception, a null or failed stage, or no answer within the deadline are
 * {@code Unavailable}. So no resolver failure is a 500 or an unlimited caller.
 * <li>Run-time changes of a base policy reach its plans by one rule, {@code Plans.policy(plan, base)}:
 * an override's quota keeps its ratio to the configured base quota
 * ({@code round(q_plan * q_base_now / q_base_configured)}, at least 1) and what it does not override
 * is the base's current value; derived policies are cached per (plan, base) in a bounded map.
 * Scaling rather than keeping the override was chosen because the operator's lever is the base
 * (halve {@code api} under load and every plan halves, the upgrade ratios kept); an absolute plan
 * quota would make a run-time cut of {@code api} spare exactly the biggest callers. Capacity
 * reductions follow the same way: {@code CapacityReductions.effective(policy, base)} applies the
 * base's factor to {@code api:pro} ({@code Plans.baseName}).
 * <li>Upgrade path: the catalog's order. A refusal under plan <i>i</i> carries plan <i>i+1</i>'s
 * {@code url} as {@code upgradeUrl}.
 * </ul>
 *
 * <p>May use: {@code dev.headroom.enforcement.partition}, headroom-http's {@code .body} and
 * headroom-core.
 */
package dev.headroom.enforcement.plan;
