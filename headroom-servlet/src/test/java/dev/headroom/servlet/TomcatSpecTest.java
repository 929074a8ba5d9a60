package dev.headroom.servlet;

import dev.headroom.conformance.SpecFixture;
import java.net.URI;

/** The HTTP conformance specification, against the filter in embedded Tomcat 10.1. */
class TomcatSpecTest extends ServletSpec {

  private EmbeddedTomcat tomcat;

  @Override
  protected URI start(SpecFixture fixture) throws Exception {
    filter = SpecApplication.filter(fixture);
    tomcat = EmbeddedTomcat.start(new SpecApplication.SpecServlet(fixture), filter);
    return tomcat.base();
  }

  @Override
  protected void stop() throws Exception {
    tomcat.close();
  }
}
