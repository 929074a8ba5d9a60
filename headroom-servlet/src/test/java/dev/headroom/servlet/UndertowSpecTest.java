package dev.headroom.servlet;

import dev.headroom.conformance.SpecFixture;
import io.undertow.Undertow;
import io.undertow.servlet.Servlets;
import io.undertow.servlet.api.DeploymentInfo;
import io.undertow.servlet.api.DeploymentManager;
import io.undertow.servlet.util.ImmediateInstanceFactory;
import jakarta.servlet.DispatcherType;
import java.net.InetSocketAddress;
import java.net.URI;

/** The HTTP conformance specification, against the filter in embedded Undertow 2.3. */
class UndertowSpecTest extends ServletSpec {

  private Undertow undertow;
  private DeploymentManager manager;

  @Override
  protected URI start(SpecFixture fixture) throws Exception {
    DeploymentInfo info = Servlets.deployment()
        .setClassLoader(UndertowSpecTest.class.getClassLoader())
        .setContextPath("/")
        .setDeploymentName("spec")
        .addServlet(Servlets.servlet("spec", SpecApplication.SpecServlet.class,
            new ImmediateInstanceFactory<>(new SpecApplication.SpecServlet(fixture))).addMapping("/*").setAsyncSupported(true))
        .addFilter(Servlets.filter("headroom", HeadroomFilter.class,
            new ImmediateInstanceFactory<>(filter = SpecApplication.filter(fixture))).setAsyncSupported(true))
        .addFilterUrlMapping("headroom", "/*", DispatcherType.REQUEST);
    manager = Servlets.defaultContainer().addDeployment(info);
    manager.deploy();
    undertow = Undertow.builder().addHttpListener(0, "127.0.0.1").setHandler(manager.start()).build();
    undertow.start();
    int port = ((InetSocketAddress) undertow.getListenerInfo().get(0).getAddress()).getPort();
    return URI.create("http://127.0.0.1:" + port);
  }

  @Override
  protected void stop() throws Exception {
    undertow.stop();
    manager.stop();
    manager.undeploy();
  }
}
