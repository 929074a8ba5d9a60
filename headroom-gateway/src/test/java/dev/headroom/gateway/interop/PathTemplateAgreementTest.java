package dev.headroom.gateway.interop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.InMemoryStore;
import dev.headroom.ManualTicker;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.client.DiscoveredLimits;
import dev.headroom.gateway.Gateway;
import dev.headroom.gateway.GatewayConfig;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.PolicyTexts;
import dev.headroom.http.path.PathTemplate;
import dev.headroom.servlet.HeadroomFilter;
import dev.headroom.servlet.Route;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.assertj.core.api.SoftAssertions;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * "A template written by any front end means the same to the client" (issue 16, item 2): for each
 * row of headroom-http's grammar table ({@code path-templates.csv}: template, path, covered?), the
 * gateway and the servlet filter (embedded Jetty 12 and Tomcat 10.1) all enforce the template and
 * publish it in their discovery documents (Graceful Boundaries section 1, {@code endpoint}), and
 * the client's reading of each document covers exactly the paths the front end limits and the
 * table says.
 *
 * <p>Every template is mounted under its own prefix ({@code /t7} + template) so that one server
 * per front end holds all of them and no route shadows another; prefixing a template and its paths
 * with one literal segment changes no answer of the grammar.
 */
class PathTemplateAgreementTest {

  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private static final String POLICY_FIELD = "RateLimit-Policy";

  private record Row(String template, String path, boolean covered) {}

  private static List<Row> rows;
  private static Map<String, String> prefixes; // template -> /t<i>
  private static Gateway gateway;
  private static Server jetty;
  private static Tomcat tomcat;
  /** The servlet filter's origins: container name -> base URI. */
  private static final Map<String, URI> servlets = new LinkedHashMap<>();

  @BeforeAll
  static void start() throws Exception {
    rows = table();
    prefixes = new LinkedHashMap<>();
    rows.forEach(r -> prefixes.computeIfAbsent(r.template(), t -> "/t" + prefixes.size()));
    ManualTicker ticker = ManualTicker.atFixedInstant();

    StringBuilder routes = new StringBuilder();
    prefixes.forEach((template, prefix) -> routes.append("  - {name: ").append(prefix.substring(1))
        .append(", method: GET, path: '").append(prefix).append(template)
        .append("', upstream: demo, policies: [plenty]}\n"));
    String yaml = """
        service:
          name: Agreement
          description: Every template of the grammar table.
        listen: {host: 127.0.0.1, port: 0}
        upstreams:
          demo: {demo: true}
        policies:
          plenty:
            quota: 100000
            window: 1m
            algorithm: fixed-window
            partition: client-ip
            why: Enough for the whole table.
        routes:
        """ + routes;
    gateway = Gateway.builder(GatewayConfig.parse(yaml, "agreement.yaml")).ticker(ticker).threads(2).start();

    QuotaPolicy plenty = QuotaPolicy.builder("plenty").quota(100_000).window(Duration.ofMinutes(1)).build();
    jetty = new Server();
    ServerConnector connector = new ServerConnector(jetty);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    jetty.addConnector(connector);
    ServletContextHandler ctx = new ServletContextHandler();
    ctx.setContextPath("/");
    ctx.addServlet(new ServletHolder(new Ok()), "/*");
    ctx.addFilter(new FilterHolder(filter(ticker, plenty)), "/*", EnumSet.of(DispatcherType.REQUEST));
    jetty.setHandler(ctx);
    jetty.start();
    servlets.put("jetty", URI.create("http://127.0.0.1:" + connector.getLocalPort()));

    Path base = Files.createTempDirectory("headroom-agreement-tomcat");
    tomcat = new Tomcat();
    tomcat.setBaseDir(base.toString());
    Connector tc = new Connector();
    tc.setPort(0);
    tc.setProperty("address", "127.0.0.1");
    tomcat.setConnector(tc);
    Context tctx = tomcat.addContext("", base.toString());
    Tomcat.addServlet(tctx, "ok", new Ok());
    tctx.addServletMappingDecoded("/", "ok");
    FilterDef def = new FilterDef();
    def.setFilterName("headroom");
    def.setFilter(filter(ticker, plenty));
    tctx.addFilterDef(def);
    FilterMap map = new FilterMap();
    map.setFilterName("headroom");
    map.addURLPattern("/*");
    tctx.addFilterMap(map);
    tomcat.start();
    servlets.put("tomcat", URI.create("http://127.0.0.1:" + tc.getLocalPort()));
  }

  private static HeadroomFilter filter(ManualTicker ticker, QuotaPolicy plenty) {
    HeadroomFilter.Builder filter = HeadroomFilter.builder()
        .limiter(QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build()))
        .refusals(LimitRefusals.builder().ticker(ticker)
            .defaults(PolicyTexts.builder("Enough for the whole table.").build()).build())
        .ticker(ticker)
        .discovery("Agreement", "Every template of the grammar table.");
    prefixes.forEach((template, prefix) -> filter.route(
        Route.builder(prefix + template).methods("GET").key(prefix.substring(1)).policy(plenty).build()));
    return filter.build();
  }

  @AfterAll
  static void stop() throws Exception {
    if (gateway != null) {
      gateway.close();
    }
    if (jetty != null) {
      jetty.stop();
    }
    if (tomcat != null) {
      tomcat.stop();
      tomcat.destroy();
    }
  }

  @Test
  void theGatewayTheServletFilterAndTheClientReadingTheirDocumentsAgreeOnEveryRow() throws Exception {
    URI gw = URI.create("http://127.0.0.1:" + gateway.address().getPort());
    Map<String, URI> origins = new LinkedHashMap<>();
    origins.put("gateway", gw);
    origins.putAll(servlets);
    Map<String, DiscoveredLimits> documents = new LinkedHashMap<>();
    for (Map.Entry<String, URI> o : origins.entrySet()) {
      DiscoveredLimits doc = DiscoveredLimits.parse(get(o.getValue(), "/.well-known/limits").body());
      assertThat(doc.issues()).as(o.getKey()).isEmpty();
      documents.put(o.getKey(), doc);
    }

    SoftAssertions soft = new SoftAssertions();
    Map<String, Integer> checked = new LinkedHashMap<>();
    for (Row row : rows) {
      String prefix = prefixes.get(row.template());
      String path = prefix + row.path();
      String canonical = PathTemplate.parse(prefix + PathTemplate.parse(row.template())).toString();
      String where = row.template() + " at " + row.path();
      for (Map.Entry<String, URI> o : origins.entrySet()) {
        String name = o.getKey();
        DiscoveredLimits.Endpoint e = endpoint(documents.get(name), prefix.substring(1));
        // every front end publishes the canonical form of the one grammar
        soft.assertThat(e.path()).as(name + " publishes " + where).isEqualTo(canonical);
        // the client reading its document covers what the table says
        soft.assertThat(e.matches("GET", path)).as("client reading " + name + ": " + where).isEqualTo(row.covered());
        // and the front end limits exactly those paths
        HttpResponse<byte[]> r = get(o.getValue(), path);
        if (r.statusCode() == 400 && !name.equals("gateway")) {
          // The container refuses an ambiguous path (an encoded /, an empty segment) before any
          // filter runs (Servlet 6.0 section 3.5.2): nothing is served, so nothing to limit.
          continue;
        }
        checked.merge(name, 1, Integer::sum);
        soft.assertThat(r.headers().firstValue(POLICY_FIELD).isPresent())
            .as(name + " limits " + where + " (status " + r.statusCode() + ")").isEqualTo(row.covered());
      }
    }
    soft.assertAll();
    assertThat(checked.get("gateway")).isEqualTo(rows.size());
    servlets.keySet().forEach(name -> assertThat(checked.getOrDefault(name, 0))
        .as("rows %s served", name).isGreaterThan(rows.size() * 3 / 4));
  }

  private static DiscoveredLimits.Endpoint endpoint(DiscoveredLimits doc, String key) {
    return doc.endpoints().stream().filter(e -> e.key().equals(key)).findFirst()
        .orElseThrow(() -> new AssertionError("no endpoint " + key + " in " + doc.endpoints()));
  }

  private static HttpResponse<byte[]> get(URI origin, String rawPath) throws IOException, InterruptedException {
    return HTTP.send(HttpRequest.newBuilder(URI.create(origin + rawPath)).GET().build(),
        HttpResponse.BodyHandlers.ofByteArray());
  }

  private static List<Row> table() throws IOException {
    List<Row> out = new ArrayList<>();
    try (InputStream in = Objects.requireNonNull(
            PathTemplate.class.getResourceAsStream("path-templates.csv"), "headroom-http's test jar");
        BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
      for (String line = r.readLine(); line != null; line = r.readLine()) {
        if (line.isBlank() || line.startsWith("#")) {
          continue;
        }
        String[] f = line.split("\\|", -1);
        out.add(new Row(f[0], f[1], Boolean.parseBoolean(f[2])));
      }
    }
    assertThat(out).hasSizeGreaterThan(40);
    return out;
  }

  /** Answers 200 to everything: whether a response carries the RateLimit fields is the filter's doing. */
  private static final class Ok extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse res) throws IOException {
      res.setContentType("text/plain");
      res.getWriter().write("ok");
    }
  }
}
