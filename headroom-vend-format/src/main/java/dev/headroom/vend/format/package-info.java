/**
 * The vend wire format of the rate-limit extension (seed 003), read and written the same way by the
 * client and the server: the bounded, strict envelope reader
 * ({@link dev.headroom.vend.format.VendRequestReader}, giving a
 * {@link dev.headroom.vend.format.VendRequest} or a {@link dev.headroom.vend.format.VendRequestException}),
 * the envelope writer ({@link dev.headroom.vend.format.VendResponses}) and its Jackson configuration
 * ({@link dev.headroom.vend.format.VendJson}), {@link dev.headroom.vend.format.Scope},
 * {@link dev.headroom.vend.format.VendDuration}, {@link dev.headroom.vend.format.VendError},
 * the seed's client back-off ({@link dev.headroom.vend.format.VendBackoff}) and the extension's
 * constants ({@link dev.headroom.vend.format.RateLimitExtension}).
 *
 * <p>May use: Jackson only. No core: a client carries the format, never the enforcement
 * (headroom-vend) nor a store.
 */
package dev.headroom.vend.format;
