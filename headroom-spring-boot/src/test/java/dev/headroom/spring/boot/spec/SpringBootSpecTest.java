package dev.headroom.spring.boot.spec;

import dev.headroom.QuotaPolicy;
import dev.headroom.Store;
import dev.headroom.Ticker;
import dev.headroom.conformance.HttpAdapterSpec;
import dev.headroom.conformance.SpecFixture;
import dev.headroom.conformance.SpecRoute;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.servlet.HeadroomFilter;
import dev.headroom.servlet.UserResolver;
import dev.headroom.vend.VendRoute;
import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;

/**
 * The HTTP conformance specification against the Spring Boot starter on embedded Tomcat: policies
 * from {@code headroom.policies} properties, routes from {@link dev.headroom.spring.boot.RateLimited}
 * and {@code headroom.routes}, the fixture's store, clock and texts as the application's beans.
 */
class SpringBootSpecTest extends HttpAdapterSpec {

  /**
   * Fixture routes declared by {@code headroom.routes} properties (with their field rules), besides
   * the dialect and token-bucket routes.
   */
  private static final Set<String> CONFIGURED = Set.of("/spec/escalating", "/spec/escalating-twice",
      "/spec/reducible", "/spec/fragile", "/spec/jitter", "/spec/near", "/spec/capped", "/spec/hidden", "/spec/when",
      "/spec/failures", "/spec/charged");

  private ConfigurableApplicationContext context;

  @Override
  protected URI start(SpecFixture fixture) {
    Map<String, Object> props = new LinkedHashMap<>();
    props.put("server.port", "0");
    props.put("server.address", "127.0.0.1");
    props.put("spring.main.banner-mode", "off");
    props.put("headroom.service.name", SpecFixture.SERVICE);
    props.put("headroom.service.description", SpecFixture.DESCRIPTION);
    props.put("headroom.why", SpecFixture.WHY);
    props.put("headroom.headers.omit-on-redirect", Boolean.toString(SpecFixture.OMIT_ON_REDIRECT));
    props.put("headroom.store.on-failure", "refuse");
    List<QuotaPolicy> all = new ArrayList<>();
    fixture.routes().forEach(r -> all.addAll(r.policies()));
    for (QuotaPolicy p : all) {
      String at = "headroom.policies." + p.name() + ".";
      props.put(at + "quota", Long.toString(p.quota()));
      props.put(at + "window", p.windowSeconds() + "s");
      props.put(at + "unit", p.unit().token());
      props.put(at + "algorithm", p.algorithm().token());
      props.put(at + "partitioning", p.partitioning().map(Object::toString).orElse("global"));
      props.put(at + "lease-timeout", p.leaseTimeout().getSeconds() + "s");
    }
    for (SpecRoute r : fixture.routes()) {
      r.policies().forEach(q -> r.escalation(q.name()).ifPresent(e -> {
        String at = "headroom.policies." + q.name() + ".";
        props.put(at + "escalation-threshold", Integer.toString(e.threshold()));
        props.put(at + "escalation-block", e.block().getSeconds() + "s");
      }));
    }
    int i = 0;
    for (SpecRoute r : fixture.routes()) {
      if (r.template().startsWith("/spec/dialect/") || r.template().startsWith("/spec/bucket/")
          || CONFIGURED.contains(r.template())) {
        String at = "headroom.routes[" + i++ + "].";
        props.put(at + "path", r.template());
        for (int k = 0; k < r.methods().size(); k++) {
          props.put(at + "methods[" + k + "]", r.methods().get(k));
        }
        r.when().forEach((policy, methods) -> {
          for (int k = 0; k < methods.size(); k++) {
            props.put(at + "when[" + policy + "][" + k + "]", methods.get(k));
          }
        });
        r.counting().forEach((policy, c) -> props.put(at + "count[" + policy + "]", c.name().toLowerCase(Locale.ROOT)));
        r.chargeHeader().ifPresent(h -> {
          props.put(at + "charge-header", h);
          props.put(at + "max-cost", Long.toString(SpecFixture.MAX_CHARGE));
        });
        for (int k = 0; k < r.policies().size(); k++) {
          props.put(at + "policies[" + k + "]", r.policies().get(k).name());
        }
        props.put(at + "dialects[0]", r.dialects().iterator().next().token());
        props.put(at + "listed", Boolean.toString(r.listed()));
        r.fields().jitter().ifPresent(j -> props.put(at + "jitter", j.getSeconds() + "s"));
        r.fields().onlyNearExhaustion().ifPresent(n -> props.put(at + "only-near-exhaustion", Double.toString(n)));
        r.fields().ratioCap().ifPresent(c -> {
          props.put(at + "cap-remaining-to-reset-ratio", Double.toString(c.factor()));
          props.put(at + "cap-min-window", c.minWindow().getSeconds() + "s");
        });
      }
    }
    context = new SpringApplicationBuilder(SpecBootApplication.class)
        .properties(props)
        .initializers(ctx -> {
          GenericApplicationContext g = (GenericApplicationContext) ctx;
          g.registerBean(SpecFixture.class, () -> fixture);
          g.registerBean(Ticker.class, fixture::ticker);
          g.registerBean(Store.class, fixture::store);
          g.registerBean(LimitRefusals.class, fixture::refusals);
          g.registerBean(VendRoute.class, () -> SpecBootApplication.vendRoute(fixture));
          g.registerBean(UserResolver.class,
              () -> request -> Optional.ofNullable(request.getHeader(SpecFixture.USER_HEADER)));
        })
        .run();
    int port = context.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
    return URI.create("http://127.0.0.1:" + port);
  }

  /** Through the filter the starter registered, as an application would ({@code HeadroomFilter.reduceCapacity}). */
  @Override
  protected void reduceCapacity(String policy, double factor) {
    @SuppressWarnings("unchecked")
    FilterRegistrationBean<HeadroomFilter> registration = context.getBean("headroomFilter", FilterRegistrationBean.class);
    registration.getFilter().reduceCapacity(policy, factor);
  }

  @Override
  protected void stop() {
    context.close();
  }
}
