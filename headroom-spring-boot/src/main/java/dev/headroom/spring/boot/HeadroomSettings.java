package dev.headroom.spring.boot;

import dev.headroom.Decision;
import dev.headroom.QuotaLimiter;
import dev.headroom.StoreException;
import dev.headroom.Ticker;
import dev.headroom.enforcement.Gate;
import dev.headroom.enforcement.GateBuilder;
import dev.headroom.enforcement.GateListener;
import dev.headroom.enforcement.RouteRules;
import dev.headroom.enforcement.partition.ClientAddressResolver;
import dev.headroom.enforcement.plan.PlanResolver;
import dev.headroom.enforcement.plan.Plans;
import dev.headroom.enforcement.settings.PolicySet;
import dev.headroom.enforcement.settings.SettingsReader;
import dev.headroom.http.PartitionKeyExposure;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.headers.FieldRules;
import dev.headroom.http.headers.HeaderDialect;
import java.net.URI;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.env.Environment;

/**
 * {@code headroom.*} and {@code headroom.plans.*} read once, at startup, by headroom-http's
 * {@link SettingsReader} (the converter every binding of the settings model shares: policies,
 * plans, routes, field rules, partition key exposure) plus what only this starter has (trusted
 * proxies). Every problem found becomes
 * one {@link HeadroomConfigurationException} listing each property, its value and what is expected.
 *
 * @param policies the policies and their texts, escalations and allow lists
 * @param plans the plans, when {@code headroom.plans.catalog} has any
 * @param dialects {@code headroom.dialects}
 * @param fields {@code headroom.headers}' field rules
 * @param exposure {@code headroom.partition-key-exposure}
 * @param clientAddresses {@code headroom.client-ip}
 * @param onFailure {@code headroom.store.on-failure}
 * @param routes {@code headroom.routes}
 */
record HeadroomSettings(PolicySet policies, Optional<Plans> plans, Set<HeaderDialect> dialects, FieldRules fields,
    PartitionKeyExposure exposure, ClientAddressResolver clientAddresses, Gate.StoreFailureMode onFailure,
    List<RouteRules> routes) {

  /**
   * Reads and checks every property.
   *
   * @throws HeadroomConfigurationException listing every problem found
   */
  static HeadroomSettings read(HeadroomProperties props, HeadroomPlanProperties planProps) {
    SettingsReader r = SettingsReader.properties("headroom");
    Optional<URI> origin = r.origin(props.getService());
    PolicySet policies = r.policies(props.getWhy(), origin, props.getPolicies());
    Optional<Plans> plans = r.plans(planProps, policies.policies());
    Set<HeaderDialect> dialects = r.dialects("headroom.dialects", props.getDialects());
    if (props.getHeaders().getJitter() == null) {
      r.problem("headroom.headers.jitter", null, "a whole number of seconds from 0s to 1h, such as 5s");
    }
    FieldRules fields = r.fields("headroom.headers", props.getHeaders());
    PartitionKeyExposure exposure = r.exposure("headroom.partition-key-exposure", props.getPartitionKeyExposure(),
        "headroom.partition-key-hmac-key", props.getPartitionKeyHmacKey());
    ClientAddressResolver clients = clientAddresses(r, props);
    Gate.StoreFailureMode onFailure = r.onFailure("headroom.store.on-failure", props.getStore().getOnFailure());
    List<RouteRules> routes = r.routes("headroom.routes", props.getRoutes(), policies.policies());
    r.throwIfProblems(HeadroomConfigurationException::new);
    return new HeadroomSettings(policies, plans, dialects, fields, exposure, clients, onFailure, routes);
  }

  /** The refusal texts, with the plans whose refusals point at the next plan. */
  LimitRefusals refusals(Ticker ticker) {
    LimitRefusals.Builder b = policies.refusals(ticker);
    plans.ifPresent(p -> p.speakAsBases(b));
    try {
      return b.build();
    } catch (IllegalArgumentException ex) {
      throw new HeadroomConfigurationException("headroom.policies", ex.getMessage(),
          "guidance URLs that are relative or on headroom.service.origin", ex);
    }
  }

  private static ClientAddressResolver clientAddresses(SettingsReader r, HeadroomProperties props) {
    ClientAddressResolver.Builder b = ClientAddressResolver.builder();
    List<String> proxies = props.getClientIp().getTrustedProxies();
    for (int i = 0; i < proxies.size(); i++) {
      String proxy = proxies.get(i);
      r.check("headroom.client-ip.trusted-proxies[" + i + "]", proxy, "a CIDR range such as 10.0.0.0/8 or 2001:db8::/32",
          () -> b.trustedProxy(proxy));
    }
    return b.build();
  }

  /**
   * Configures a front end's gate from what was read: limiter, texts, clock, dialects, exposure,
   * client addresses, store-failure mode, header rules, escalations, allow lists, queues, plans and
   * discovery; the servlet filter and the WebFlux filter alike. Routes are the caller's.
   *
   * @throws HeadroomConfigurationException when plans are configured and no resolver finds them
   */
  void gate(GateBuilder<?> b, HeadroomProperties props, QuotaLimiter limiter, LimitRefusals refusals, Ticker ticker,
      Environment environment, HeadroomPlanProperties planProps, ObjectProvider<PlanResolver> planResolvers) {
    b.limiter(limiter)
        .refusals(refusals)
        .ticker(ticker)
        .dialects(dialects)
        .exposure(exposure)
        .clientAddresses(clientAddresses)
        .storeFailureMode(onFailure)
        .omitOnRedirect(props.getHeaders().isOmitOnRedirect())
        .fields(fields);
    policies.escalations().forEach(b::escalation);
    policies.allowLists().forEach(b::allow);
    policies.queues().forEach(b::queue);
    if (plans.isPresent()) {
      PlanResolver resolver = planResolvers.getIfUnique();
      if (resolver == null) {
        throw new HeadroomConfigurationException("headroom.plans.catalog", planProps.getCatalog().keySet(),
            "one PlanResolver bean that finds a request's plan (headroom-plans: ApiKeyFileResolver, JwtResolver, "
                + "SqlResolver)");
      }
      b.plans(plans.get(), resolver, planProps.getDeadline());
    }
    if (props.getDiscovery().isEnabled()) {
      String name = props.getService().getName() != null ? props.getService().getName()
          : environment.getProperty("spring.application.name", "application");
      b.discovery(name, props.getService().getDescription());
      try {
        b.discoveryPaths(props.getDiscovery().getPaths());
      } catch (IllegalArgumentException ex) {
        throw new HeadroomConfigurationException("headroom.discovery.paths", props.getDiscovery().getPaths(),
            "paths starting with /", ex);
      }
      if (props.getDiscovery().getChangelog() != null) {
        String changelog = props.getDiscovery().getChangelog();
        b.discoveryCustomizer(d -> d.changelog(changelog));
      }
    }
  }

  /** One listener telling each of {@code listeners} ({@link #tellEach}); none for none. */
  static GateListener composite(List<GateListener> listeners) {
    if (listeners.size() == 1) {
      return listeners.get(0);
    }
    return new GateListener() {
      @Override
      public void decided(RouteRules route, Decision decision) {
        tellEach(listeners, l -> l.decided(route, decision));
      }

      @Override
      public void shadowDecided(RouteRules route, Decision decision) {
        tellEach(listeners, l -> l.shadowDecided(route, decision));
      }

      @Override
      public void storeFailed(RouteRules route, StoreException failure) {
        tellEach(listeners, l -> l.storeFailed(route, failure));
      }
    };
  }

  /** Tells every listener: one that throws cannot keep the others from hearing (listener contracts). */
  static <L> void tellEach(List<L> listeners, Consumer<L> call) {
    for (L l : listeners) {
      try {
        call.accept(l);
      } catch (RuntimeException ignored) {
        // A listener cannot fail the request or silence the others.
      }
    }
  }
}
