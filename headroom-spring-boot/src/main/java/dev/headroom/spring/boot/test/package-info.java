/**
 * Test support for applications using the starter:
 * {@link dev.headroom.spring.boot.test.AutoConfigureHeadroom} adds Headroom's auto-configuration
 * to a Spring MVC test slice.
 *
 * <p>May use: {@code dev.headroom.spring.boot} and Spring Boot's test auto-configuration.
 */
package dev.headroom.spring.boot.test;
