/**
 * The byte-level splice of the extension entry into a vend response
 * ({@link dev.headroom.vend.internal.ExtensionSplice}), behind {@code VendDecision.decorate}.
 *
 * <p>May use: {@code dev.headroom.vend}, headroom-vend-format and Jackson. Private to headroom-vend.
 */
package dev.headroom.vend.internal;
