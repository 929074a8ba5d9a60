package dev.headroom.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.enforcement.plan.PlanResolution;
import dev.headroom.enforcement.plan.PlanResolver;
import dev.headroom.servlet.HeadroomFilter;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;

/**
 * {@code headroom.plans.*} with a {@link PlanResolver} bean: the filter is built with the plans
 * (its discovery document lists them); missing or bad settings stop startup naming the property.
 * (The filter's behaviour with plans over HTTP is headroom-servlet's PlansFilterTest.)
 */
class PlansPropertiesTest {
  private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(HeadroomAutoConfiguration.class))
      .withPropertyValues("headroom.policies.api.quota=60", "headroom.policies.api.window=60s",
          "headroom.routes[0].path=/api/**", "headroom.routes[0].policies[0]=api",
          "headroom.plans.fallback=free", "headroom.plans.catalog.free.policies.api.quota=60",
          "headroom.plans.catalog.pro.url=/pricing#pro", "headroom.plans.catalog.pro.policies.api.quota=1000",
          "headroom.plans.catalog.acme.policies.api.quota=5000", "headroom.plans.catalog.acme.policies.api.algorithm=sliding-window");

  static final PlanResolver BY_HEADER = view -> CompletableFuture.completedFuture(
      view.headers("X-Plan").isEmpty() ? PlanResolution.anonymous() : new PlanResolution.Named(view.headers("X-Plan").get(0)));

  @Test
  void theFilterEnforcesThePlansWithTheResolverBean() {
    runner.withBean(PlanResolver.class, () -> BY_HEADER).run(ctx -> {
      assertThat(ctx).hasNotFailed();
      @SuppressWarnings("unchecked")
      HeadroomFilter filter = ((FilterRegistrationBean<HeadroomFilter>) ctx.getBean("headroomFilter")).getFilter();
      String doc = filter.discovery().orElseThrow().toJson();
      assertThat(doc).contains("\"fallbackPlan\":\"free\"").contains("\"policy\":\"api:pro\",\"maxRequests\":1000")
          .contains("\"policy\":\"api:acme\",\"maxRequests\":5000").contains("\"algorithm\":\"sliding-window\"");
    });
  }

  @Test
  void plansWithoutAResolverBeanStopStartup() {
    runner.run(ctx -> {
      assertThat(ctx).hasFailed();
      assertThat(ctx.getStartupFailure()).hasStackTraceContaining("headroom.plans.catalog")
          .hasStackTraceContaining("one PlanResolver bean");
    });
  }

  @Test
  void badPlanSettingsNameTheProperty() {
    runner.withBean(PlanResolver.class, () -> BY_HEADER).withPropertyValues("headroom.plans.fallback=gold")
        .run(ctx -> assertThat(ctx.getStartupFailure())
            .hasStackTraceContaining("headroom.plans.fallback: expected one of [free, pro, acme], got 'gold'"));
    runner.withBean(PlanResolver.class, () -> BY_HEADER).withPropertyValues("headroom.plans.catalog.pro.policies.nope.quota=5")
        .run(ctx -> assertThat(ctx.getStartupFailure()).hasStackTraceContaining("headroom.plans.catalog.pro.policies.nope"));
    runner.withBean(PlanResolver.class, () -> BY_HEADER).withPropertyValues("headroom.plans.catalog.pro.policies.api.algorithm=magic")
        .run(ctx -> assertThat(ctx.getStartupFailure()).hasStackTraceContaining("headroom.plans.catalog.pro.policies.api.algorithm"));
  }
}
