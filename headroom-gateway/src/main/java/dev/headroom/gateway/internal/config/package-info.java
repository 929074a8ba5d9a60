/**
 * Reading the gateway's configuration: the YAML file (bounded in size, {@link
 * dev.headroom.gateway.internal.config.ConfigSource}), one reader per section ({@code service},
 * {@code listen}, {@code store}, {@code limits}, {@code upstreams}, {@code policies}, {@code routes},
 * {@code vend}, {@code pk}, {@code plans}) that reports every problem by its path, and the watcher
 * that reloads the file when it changes.
 *
 * <p>Owns: turning text into the validated {@link dev.headroom.gateway.internal.config.ConfigSections}
 * that {@code GatewayConfig} builds itself from; nothing here runs a request.
 *
 * <p>May use: the section records of {@code dev.headroom.gateway.config}, the settings readers of
 * headroom-enforcement, and of the gateway's runtime only what a load-time check must build exactly
 * as requests will: the request vocabulary ({@code GatewayMessages.check}, in
 * {@code internal.proxy}) and the plan resolvers ({@code PlanResolvers.jwt} and {@code .sql}, in
 * {@code internal}). Public here is only what {@code GatewayConfig}, the server and the proxy call:
 * {@code ConfigReader.read}, {@code ConfigSource}, {@code ConfigSections}, {@code ConfigWatcher}
 * and {@code VendLimits}.
 */
package dev.headroom.gateway.internal.config;
