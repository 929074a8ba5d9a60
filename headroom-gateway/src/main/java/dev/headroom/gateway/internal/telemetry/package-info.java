/**
 * Traces and metrics over OTLP ({@code telemetry} in the configuration): the OpenTelemetry SDK
 * and its OTLP/HTTP exporter for one server span per exchange, Micrometer's OTLP registry for the
 * gateway's meters. Nothing here is loaded unless {@code telemetry.otlp.endpoint} is set: the
 * exchange path holds a null {@link dev.headroom.gateway.internal.telemetry.Telemetry} otherwise.
 */
package dev.headroom.gateway.internal.telemetry;
