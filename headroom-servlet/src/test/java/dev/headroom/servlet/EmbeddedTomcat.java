package dev.headroom.servlet;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;

/**
 * One servlet at {@code /} behind the filter at {@code /*}, both async-supported, in embedded Tomcat
 * 10.1 on a loopback port; close stops it.
 */
final class EmbeddedTomcat implements AutoCloseable {
  private final Tomcat tomcat;
  private final URI base;

  private EmbeddedTomcat(Tomcat tomcat, URI base) {
    this.tomcat = tomcat;
    this.base = base;
  }

  /**
   * @param dispatchers the dispatcher types the filter is mapped for; {@code REQUEST} alone when none
   */
  static EmbeddedTomcat start(HttpServlet servlet, Filter filter, DispatcherType... dispatchers) throws Exception {
    Path dir = Files.createTempDirectory("headroom-tomcat");
    Tomcat tomcat = new Tomcat();
    tomcat.setBaseDir(dir.toString());
    Connector connector = new Connector();
    connector.setPort(0);
    connector.setProperty("address", "127.0.0.1");
    tomcat.setConnector(connector);
    Context ctx = tomcat.addContext("", dir.toString());
    Tomcat.addServlet(ctx, "app", servlet).setAsyncSupported(true);
    ctx.addServletMappingDecoded("/", "app");
    FilterDef def = new FilterDef();
    def.setFilterName("headroom");
    def.setFilter(filter);
    def.setAsyncSupported("true");
    ctx.addFilterDef(def);
    FilterMap map = new FilterMap();
    map.setFilterName("headroom");
    map.addURLPattern("/*");
    for (DispatcherType d : dispatchers) {
      map.setDispatcher(d.name());
    }
    ctx.addFilterMap(map);
    tomcat.start();
    return new EmbeddedTomcat(tomcat, URI.create("http://127.0.0.1:" + connector.getLocalPort()));
  }

  /** The base URI, without a trailing slash. */
  URI base() {
    return base;
  }

  @Override
  public void close() throws Exception {
    tomcat.stop();
    tomcat.destroy();
  }
}
