package dev.headroom.servlet;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.apache.catalina.Context;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;

/**
 * An embedded Tomcat on a free loopback port serving "ok" behind one {@link HeadroomFilter}
 * ({@code /status/NNN} answers with that status).
 */
final class TomcatWithFilter implements AutoCloseable {
  private final Tomcat tomcat = new Tomcat();
  private final Connector connector = new Connector();
  private final HttpClient client = HttpClient.newHttpClient();

  TomcatWithFilter(HeadroomFilter filter) throws IOException, LifecycleException {
    Path base = Files.createTempDirectory("headroom-tomcat");
    tomcat.setBaseDir(base.toString());
    connector.setPort(0);
    connector.setProperty("address", "127.0.0.1");
    tomcat.setConnector(connector);
    Context ctx = tomcat.addContext("", base.toString());
    Tomcat.addServlet(ctx, "ok", new HttpServlet() {
      private static final long serialVersionUID = 1L;

      @Override
      protected void doGet(HttpServletRequest req, HttpServletResponse res) throws IOException {
        String path = req.getRequestURI();
        if (path.startsWith("/status/")) {
          res.setStatus(Integer.parseInt(path.substring("/status/".length())));
        }
        res.getWriter().write("ok");
      }
    });
    ctx.addServletMappingDecoded("/", "ok");
    FilterDef def = new FilterDef();
    def.setFilterName("headroom");
    def.setFilter(filter);
    ctx.addFilterDef(def);
    FilterMap map = new FilterMap();
    map.setFilterName("headroom");
    map.addURLPattern("/*");
    ctx.addFilterMap(map);
    tomcat.start();
  }

  /** GET {@code path}, with one header when {@code name} is not null. */
  HttpResponse<String> get(String path, String name, String value) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + connector.getLocalPort() + path))
        .timeout(Duration.ofSeconds(10));
    if (name != null) {
      b.header(name, value);
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Override
  public void close() throws LifecycleException {
    tomcat.stop();
    tomcat.destroy();
  }
}
