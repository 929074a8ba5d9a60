/**
 * Response bodies: one refusal that is at once RFC 9457 problem details and a Graceful Boundaries
 * structured refusal ({@link dev.headroom.http.body.Refusal}), written for a refused decision by
 * {@link dev.headroom.http.body.LimitRefusals} with each policy's
 * {@link dev.headroom.http.body.PolicyTexts}, in the format the request prefers
 * ({@link dev.headroom.http.body.RefusalFormat}: JSON, or HTML with a retry-after meta element);
 * the bodies of errors a service answers itself ({@link dev.headroom.http.body.ServiceErrors}); and
 * the lenient reader the client and the checker use ({@link dev.headroom.http.body.RefusalReader}).
 *
 * <p>May use: headroom-core and Jackson.
 */
package dev.headroom.http.body;
