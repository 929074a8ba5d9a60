/**
 * One behaviour specification over every front end, on real servers:
 * {@link dev.headroom.conformance.HttpAdapterSpec} (with {@link dev.headroom.conformance.HttpAdapterSpecCore})
 * runs the routes of a {@link dev.headroom.conformance.SpecFixture} against an adapter and checks
 * fields, refusals, dialects, leases, content bytes and discovery through a
 * {@link dev.headroom.conformance.RecordingStore}; {@link dev.headroom.conformance.SpecEndpoint}s
 * are what the application does, served by {@link dev.headroom.conformance.SpecUpstream} for the
 * front ends that run in front of one.
 *
 * <p>The HTTP behaviour (headers per dialect, refusal bodies, HTML, discovery ETag/304, lease
 * release, byte charging, no fields on the application's redirects, nothing charged for HEAD or
 * reset content) is one abstract JUnit class, {@code HttpAdapterSpec}, with a fixture of routes and a recording store; Tomcat, Jetty, Undertow
 * and the Spring Boot starter each run it over real sockets, and the gateway runs it
 * ({@code GatewaySpecTest}) by translating {@code SpecFixture} into its config and serving
 * {@code SpecEndpoint}s from a JDK HTTP server upstream; where the gateway differs for a reason (no
 * authenticated user: {@code user} becomes {@code header:X-Spec-User}, scope {@code key}) the spec
 * has an overridable method ({@code userScope()}) whose default keeps the filter's behaviour.
 *
 * <p>May use: headroom-enforcement (and what it may use), Jackson, JUnit 5 and AssertJ: this module
 * is test support, main code only so that every front end's tests can extend it.
 */
package dev.headroom.conformance;
