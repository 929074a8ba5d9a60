/**
 * The sections of the gateway's configuration as immutable records, each validated when the file is
 * read: {@link dev.headroom.gateway.config.Service}, {@link dev.headroom.gateway.config.Listen},
 * {@link dev.headroom.gateway.config.StoreSettings}, {@link dev.headroom.gateway.config.Policy},
 * {@link dev.headroom.gateway.config.Route}, {@link dev.headroom.gateway.config.PlanSettings} and the
 * rest. The readers of the YAML use these records, never {@code GatewayConfig} itself, so the
 * dependency goes one way.
 *
 * <p>May use: the values of headroom-enforcement, headroom-http, headroom-redis and headroom-core
 * (policies, texts, plans, partitions, leasing), and the JDK.
 */
package dev.headroom.gateway.config;
