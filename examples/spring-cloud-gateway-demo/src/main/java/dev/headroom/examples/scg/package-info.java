/**
 * Spring Cloud Gateway with Headroom's route filter ({@link dev.headroom.examples.scg.DemoGateway})
 * in front of a small upstream ({@code DemoUpstream}).
 *
 * <p>May use: headroom-spring-cloud-gateway and Spring Cloud Gateway, as any application would.
 */
package dev.headroom.examples.scg;
