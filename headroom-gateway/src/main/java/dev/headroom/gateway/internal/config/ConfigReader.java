package dev.headroom.gateway.internal.config;

import dev.headroom.Partitioning;
import com.fasterxml.jackson.databind.JsonNode;
import dev.headroom.enforcement.AdaptiveConcurrency;
import dev.headroom.enforcement.discovery.LimitsDiscoveryDocument;
import dev.headroom.enforcement.settings.SettingsReader;
import dev.headroom.gateway.ConfigException;
import dev.headroom.gateway.config.AccessLogSettings;
import dev.headroom.gateway.config.Admin;
import dev.headroom.gateway.config.Limits;
import dev.headroom.gateway.config.Listen;
import dev.headroom.gateway.config.ListenTls;
import dev.headroom.gateway.config.PartitionKeySettings;
import dev.headroom.gateway.config.PlanSettings;
import dev.headroom.gateway.config.Policy;
import dev.headroom.gateway.config.Route;
import dev.headroom.gateway.config.Service;
import dev.headroom.gateway.config.StoreSettings;
import dev.headroom.gateway.config.TelemetrySettings;
import dev.headroom.gateway.config.Shutdown;
import dev.headroom.gateway.config.Timeouts;
import dev.headroom.gateway.config.Upstream;
import dev.headroom.gateway.internal.proxy.GatewayMessages;
import dev.headroom.http.body.PolicyTexts;
import dev.headroom.http.path.PathTemplate;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * Reads the YAML configuration as a tree ({@link ConfigSource}: bounded, no duplicate keys, no
 * aliases) and validates all of it before building anything, so that
 * a bad file is reported with every problem at once, each naming its YAML path, the value found and
 * what is expected. Jackson data binding stops at the first problem, which is why the tree is
 * walked by hand.
 *
 * <p>This class is the entry point and reads only the root mapping; one reader per section owns
 * the rest, all adding to one problem list through {@link SectionReader} (the typed reads and the
 * message form {@code path: value is not valid; expected ...}):
 * <ul>
 *   <li>{@link ServiceReader}: {@code service};
 *   <li>{@link ListenReader}: {@code listen}, {@code admin}, {@code trustedProxies};
 *   <li>{@link StoreReader}: {@code store};
 *   <li>{@link LimitsReader}: {@code limits}, {@code timeouts}, {@code shutdown};
 *   <li>{@link UpstreamReader}: {@code upstreams};
 *   <li>{@link PolicyReader}: {@code policies} and their texts and guidance;
 *   <li>{@link RouteReader}: {@code routes} (methods, path, references, dialects);
 *   <li>{@link VendReader}: a vend route's {@code vend};
 *   <li>{@link PartitionKeyReader}: {@code pk} and a route's {@code pk};
 *   <li>{@link PlansReader}: {@code plans} (catalog, fallback, resolver);
 *   <li>{@link AccessLogReader}: {@code accessLog};
 *   <li>{@link TelemetryReader}: {@code telemetry}.
 * </ul>
 * Once every section is valid, {@link #vocabulary} builds what requests will use to catch parts
 * that disagree with each other.
 *
 * <p>Dependency direction: {@code GatewayConfig} calls {@link #read} and builds itself from the
 * {@link ConfigSections} returned; no reader, and nothing a reader uses, refers to {@code GatewayConfig}
 * itself, only to the section records of {@code dev.headroom.gateway.config}. (The vocabulary check
 * builds the same {@link GatewayMessages} requests use, from the sections, as the server does.)
 *
 * <p>Not thread-safe; one instance per read.
 */
public final class ConfigReader {

  private final List<String> problems = new ArrayList<>();
  private final Function<String, String> env;
  /** The configuration file's folder, which relative file paths resolve against; null for text without a file. */
  private final Path folder;

  private ConfigReader(Function<String, String> env, Path folder) {
    this.env = env;
    this.folder = folder;
  }

  /**
   * Parses and validates; see {@link dev.headroom.gateway.GatewayConfig#parse(String, String)}.
   *
   * @param env the environment variables {@code pk.keyEnv} may name
   * @param folder the configuration file's folder, which relative file paths ({@code plans.resolver.file},
   *     {@code jwksFile}, {@code keyFile}, {@code passwordFile}, {@code pk.keyFile},
   *     {@code admin.tokenFile}, {@code upstreams.NAME.tls} files) resolve against; null for text without a file (the working directory)
   * @return every section, valid and with every reference resolved
   * @throws ConfigException listing every problem found
   */
  public static ConfigSections read(String yaml, String source, Function<String, String> env, Path folder)
      throws ConfigException {
    ConfigReader reader = new ConfigReader(env, folder);
    JsonNode root = ConfigSource.tree(yaml, source);
    if (root.isMissingNode() || root.isNull()) {
      throw new ConfigException(source, List.of("(root): the file is empty; expected a mapping with "
          + "service, upstreams, policies and routes"));
    }
    ConfigSections config = reader.root(root);
    if (!reader.problems.isEmpty()) {
      throw new ConfigException(source, reader.problems);
    }
    return config;
  }

  private ConfigSections root(JsonNode root) {
    SectionReader top = new SectionReader(problems) {};
    if (!root.isObject()) {
      top.problem("(root)", root, "a mapping with service, upstreams, policies and routes");
      return null;
    }
    top.keys("", root, "service", "listen", "admin", "store", "trustedProxies", "limits", "timeouts",
        "shutdown", "upstreams", "policies", "routes", "pk", "plans", "accessLog", "telemetry");
    Service service = new ServiceReader(problems).service(root.path("service"));
    ListenReader listenReader = new ListenReader(problems, env, folder);
    Listen listen = listenReader.listen(root.path("listen"));
    Admin admin = listenReader.admin(root.path("admin"));
    StoreReader storeReader = new StoreReader(problems);
    StoreSettings store = storeReader.store(root.path("store"));
    List<String> trusted = listenReader.trustedProxies(root.path("trustedProxies"));
    LimitsReader limitsReader = new LimitsReader(problems);
    Limits limits = limitsReader.limits(root.path("limits"));
    Timeouts timeouts = limitsReader.timeouts(root.path("timeouts"));
    Shutdown shutdown = limitsReader.shutdown(root.path("shutdown"));
    Map<String, Upstream> upstreams = new UpstreamReader(problems, folder).upstreams(root.path("upstreams"));
    Map<String, Policy> policies = new PolicyReader(problems, service == null ? null
        : service.origin().orElse(null)).policies(root.path("policies"));
    storeReader.leasedPolicies(store, policies);
    PartitionKeyReader pkReader = new PartitionKeyReader(problems, env, folder);
    List<Route> routes = new RouteReader(problems, new VendReader(problems), pkReader)
        .routes(root.path("routes"), upstreams, policies, declared(root.path("policies")));
    if (service != null) {
      service.humanUrl().ifPresent(page -> pageClash(page, routes));
    }
    PartitionKeySettings pk = pkReader.pk(root.path("pk"), routes);
    whenRoutes(policies, routes);
    clientCertificates(listen, policies);
    Optional<PlanSettings> plans = new PlansReader(problems, env, folder).plans(root.path("plans"), policies);
    adaptiveShares(routes, plans, root.path("plans"));
    Optional<AccessLogSettings> accessLog = new AccessLogReader(problems, folder).accessLog(root.path("accessLog"));
    Optional<TelemetrySettings> telemetry = new TelemetryReader(problems).telemetry(root.path("telemetry"));
    if (!problems.isEmpty()) {
      return null;
    }
    ConfigSections config = new ConfigSections(service, listen, admin, store, trusted, limits, timeouts,
        shutdown, upstreams, policies, routes, pk, plans, accessLog, telemetry);
    vocabulary(config);
    return problems.isEmpty() ? config : null;
  }

  /**
   * Every plan a route's {@code adaptive.shares} names must be in {@code plans.catalog}: a request's
   * plan picks its share, so a share of no plan would never be kept, and shares without plans none.
   * Plans that had problems of their own get no second problem.
   */
  private void adaptiveShares(List<Route> routes, Optional<PlanSettings> plans, JsonNode plansNode) {
    Set<String> declared = new LinkedHashSet<>();
    if (plansNode.path("catalog").isObject()) {
      plansNode.path("catalog").fieldNames().forEachRemaining(declared::add);
    }
    for (int i = 0; i < routes.size(); i++) {
      Optional<AdaptiveConcurrency> a = routes.get(i).adaptive();
      if (a.isEmpty() || a.get().shares().isEmpty()) {
        continue;
      }
      String at = "routes[" + i + "].adaptive.shares";
      if (declared.isEmpty()) {
        problems.add(at + ": \"" + a.get().shares() + "\" is not valid; expected plans under plans.catalog, since a "
            + "request's plan picks its share");
        continue;
      }
      a.get().shares().keySet().stream().filter(p -> !declared.contains(p)).findFirst().ifPresent(p ->
          problems.add(at + "." + p + ": \"" + p + "\" is not valid; expected one of the plans " + declared));
    }
  }

  /** Every route a policy's {@code when.routes} names must exist: a typo would silently never match. */
  private void whenRoutes(Map<String, Policy> policies, List<Route> routes) {
    Set<String> names = new LinkedHashSet<>();
    routes.forEach(r -> names.add(r.name()));
    policies.forEach((name, p) -> p.rules().routes().stream().filter(r -> !names.contains(r)).sorted().forEach(r ->
        problems.add("policies." + name + ".when.routes: \"" + r + "\" is not valid; expected one of the route names "
            + names)));
  }

  /**
   * A policy that partitions by {@code client-cert} needs client certificates: without
   * {@code listen.tls.clientAuth} every request would fall in the one partition {@code cert:none}.
   */
  private void clientCertificates(Listen listen, Map<String, Policy> policies) {
    boolean asked = listen != null && listen.tls().map(t -> t.clientAuth() != ListenTls.ClientAuth.NONE).orElse(false);
    if (asked) {
      return;
    }
    policies.forEach((name, p) -> {
      boolean reads = p.partition().alternatives().stream().flatMap(List::stream)
          .anyMatch(part -> part.component() == Partitioning.Component.CLIENT_CERT);
      if (reads) {
        problems.add("policies." + name + ".partition: \"" + p.partition() + "\" is not valid; expected listen.tls "
            + "with clientAuth optional or required, since client-cert partitions by the client's certificate");
      }
    });
  }

  /** The names under {@code policies}, valid or not. */
  private static Set<String> declared(JsonNode policies) {
    Set<String> names = new LinkedHashSet<>();
    if (policies.isObject()) {
      policies.fieldNames().forEachRemaining(names::add);
    }
    return names;
  }

  /** The limits page is answered before the route table: a route it would hide is a mistake. */
  private void pageClash(String page, List<Route> routes) {
    for (Route r : routes) {
      if (PathTemplate.parse(r.path()).matches(page)) {
        problems.add("service.humanUrl: \"" + page + "\" is also a path of route " + r.name()
            + " (" + r.path() + "); expected a path no route covers (the gateway serves the limits page there)");
      }
    }
  }

  /**
   * Builds what requests will use (header emitters, refusal texts, the discovery document) once
   * now, so that whatever headroom-http refuses in combination (a changelog on another origin, two
   * routes with one discovery key) is reported at load, never at the first request. Each service
   * field is first checked alone in a discovery document of its own, so its problem is named by its
   * own key; what is left is how the routes go together.
   */
  private void vocabulary(ConfigSections config) {
    Service s = config.service();
    Optional<URI> origin = s.origin();
    SettingsReader fields = SettingsReader.of("", key -> key);
    fields.checkExplained("service.name", s.name(), "a service name for the discovery document",
        () -> document(s.name(), CHECK_DESCRIPTION, origin).build());
    fields.checkExplained("service.description", s.description(), "a description for the discovery document",
        () -> document(CHECK_NAME, s.description().isBlank() ? CHECK_DESCRIPTION : s.description(), origin).build());
    s.changelog().ifPresent(c -> fields.checkExplained("service.changelog", c, "a relative or same-origin URL "
        + "(Graceful Boundaries SC-6)", () -> document(CHECK_NAME, CHECK_DESCRIPTION, origin).changelog(c).build()));
    s.feed().ifPresent(f -> fields.checkExplained("service.feed", f, "a relative or same-origin URL "
        + "(Graceful Boundaries SC-6)", () -> document(CHECK_NAME, CHECK_DESCRIPTION, origin).feed(f).build()));
    fields.problems().forEach(p -> problems.add(SectionReader.inWords(p)));
    if (!fields.problems().isEmpty()) {
      return;
    }
    try {
      GatewayMessages.check(config);
    } catch (IllegalArgumentException e) {
      problems.add("routes: " + e.getMessage());
    }
  }

  /** The name and description of documents made only to check one service field alone; never sent. */
  private static final String CHECK_NAME = "Service";
  private static final String CHECK_DESCRIPTION = "A service.";

  private static LimitsDiscoveryDocument.Builder document(String name, String description, Optional<URI> origin) {
    LimitsDiscoveryDocument.Builder b = LimitsDiscoveryDocument.builder(name, description)
        .texts(q -> PolicyTexts.builder(GatewayMessages.DEFAULT_WHY).build());
    origin.ifPresent(b::origin);
    return b;
  }
}
