package dev.headroom.spring.boot;

import dev.headroom.enforcement.settings.PlansSettings;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code headroom.plans.*}: named plans, each a set of overrides of the policies' quota, window and
 * algorithm, and the fallback plan of a caller whose plan cannot be found; a binding of
 * headroom-http's {@link PlansSettings}. A request's plan comes from the application's
 * {@link dev.headroom.enforcement.plan.PlanResolver} bean (headroom-plans provides an API key file, a JWT
 * claim and a SQL query).
 */
@ConfigurationProperties(prefix = "headroom.plans")
public class HeadroomPlanProperties extends PlansSettings {
}
