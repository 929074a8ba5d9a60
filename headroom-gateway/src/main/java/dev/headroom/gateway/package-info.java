/**
 * The standalone gateway, a reverse proxy in front of an upstream and a front end of
 * headroom-enforcement's enforcement path: {@link dev.headroom.gateway.Gateway} serves a
 * {@link dev.headroom.gateway.GatewayConfig} read from YAML (every problem of a file reported at
 * once in a {@link dev.headroom.gateway.ConfigException}; a listener that cannot open its address is
 * a {@link dev.headroom.gateway.ListenException}) and stops gracefully through
 * {@link dev.headroom.gateway.Gateway#drain(java.time.Duration)}. The configuration's sections are the
 * records of {@code dev.headroom.gateway.config}; the proxy itself is internal. The module's README
 * is the configuration reference (checked against the JSON Schema by its tests),
 * follows one request through the proxy and records the design and performance decisions behind it.
 *
 * <p>May use: headroom-enforcement, headroom-vend, headroom-plans, headroom-redis (and what they may
 * use), Netty, Jackson (YAML), Micrometer and SLF4J. Never the checker or picocli.
 */
package dev.headroom.gateway;
