/**
 * The one enforcement path every front end uses: {@link dev.headroom.enforcement.Gate}, built by
 * {@link dev.headroom.enforcement.GateBuilder} from {@link dev.headroom.enforcement.RouteRules},
 * decides a {@link dev.headroom.enforcement.GateRequest} into a
 * {@link dev.headroom.enforcement.Verdict}: pass, an allowed request followed to the end of its
 * response ({@link dev.headroom.enforcement.Admission}: RateLimit fields for the status the
 * application sets, leases released, content bytes charged), or an
 * {@link dev.headroom.enforcement.GateResponse} the gate gives itself (a refusal, the discovery
 * document). Around it: escalation of callers who keep sending while told to wait
 * ({@link dev.headroom.enforcement.Escalations}), run-time capacity
 * ({@link dev.headroom.enforcement.CapacityReductions}) and limits
 * ({@link dev.headroom.enforcement.RuntimeLimits}), request costs
 * ({@link dev.headroom.enforcement.CostHeader}), shadow policies
 * ({@link dev.headroom.enforcement.ShadowFields}) and observers
 * ({@link dev.headroom.enforcement.GateListener}).
 *
 * <p>May use: {@code .partition}, {@code .plan}, {@code .discovery}, headroom-http's vocabulary,
 * headroom-core and Jackson. The front ends (the gateway, the servlet and WebFlux filters, Spring
 * Cloud Gateway) adapt their own request and response types to it and write nothing of the
 * decision themselves.
 */
package dev.headroom.enforcement;
