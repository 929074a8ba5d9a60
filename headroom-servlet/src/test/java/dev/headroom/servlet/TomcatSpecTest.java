package dev.headroom.servlet;

import dev.headroom.conformance.HttpAdapterSpec;
import dev.headroom.conformance.SpecFixture;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;

/** The HTTP conformance specification, against the filter in embedded Tomcat 10.1. */
class TomcatSpecTest extends HttpAdapterSpec {

  private Tomcat tomcat;

  @Override
  protected URI start(SpecFixture fixture) throws Exception {
    Path base = Files.createTempDirectory("headroom-tomcat");
    tomcat = new Tomcat();
    tomcat.setBaseDir(base.toString());
    Connector connector = new Connector();
    connector.setPort(0);
    connector.setProperty("address", "127.0.0.1");
    tomcat.setConnector(connector);
    Context ctx = tomcat.addContext("", base.toString());
    Tomcat.addServlet(ctx, "spec", new SpecApplication.SpecServlet(fixture)).setAsyncSupported(true);
    ctx.addServletMappingDecoded("/", "spec");
    FilterDef def = new FilterDef();
    def.setFilterName("headroom");
    def.setFilter(SpecApplication.filter(fixture));
    def.setAsyncSupported("true");
    ctx.addFilterDef(def);
    FilterMap map = new FilterMap();
    map.setFilterName("headroom");
    map.addURLPattern("/*");
    ctx.addFilterMap(map);
    tomcat.start();
    return URI.create("http://127.0.0.1:" + connector.getLocalPort());
  }

  @Override
  protected void stop() throws Exception {
    tomcat.stop();
    tomcat.destroy();
  }
}
