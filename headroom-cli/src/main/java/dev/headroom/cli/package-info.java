/**
 * The {@code headroom} command line ({@link dev.headroom.cli.HeadroomCommand}): {@code serve} runs
 * the gateway, {@code check} runs headroom-checker's command; its executable jar is what
 * {@code ./headroom} builds and runs.
 *
 * <p>May use: headroom-gateway, headroom-checker (and what they may use), picocli and, at run time,
 * the SLF4J binding.
 */
package dev.headroom.cli;
