package dev.headroom.servlet;

import dev.headroom.conformance.SpecFixture;
import jakarta.servlet.DispatcherType;
import java.net.URI;
import java.util.EnumSet;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/** The HTTP conformance specification, against the filter in embedded Jetty 12 (EE10). */
class JettySpecTest extends ServletSpec {

  private Server server;

  @Override
  protected URI start(SpecFixture fixture) throws Exception {
    server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler ctx = new ServletContextHandler();
    ctx.setContextPath("/");
    ServletHolder servlet = new ServletHolder(new SpecApplication.SpecServlet(fixture));
    servlet.setAsyncSupported(true);
    ctx.addServlet(servlet, "/*");
    filter = SpecApplication.filter(fixture);
    FilterHolder holder = new FilterHolder(filter);
    holder.setAsyncSupported(true);
    ctx.addFilter(holder, "/*", EnumSet.of(DispatcherType.REQUEST));
    server.setHandler(ctx);
    server.start();
    return URI.create("http://127.0.0.1:" + connector.getLocalPort());
  }

  @Override
  protected void stop() throws Exception {
    server.stop();
  }
}
