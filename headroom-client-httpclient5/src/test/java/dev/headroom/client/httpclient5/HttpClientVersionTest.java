package dev.headroom.client.httpclient5;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.core5.http.HttpRequest;
import org.apache.hc.core5.util.VersionInfo;
import org.junit.jupiter.api.Test;

/**
 * Which HttpClient and HttpCore this test run has: the module's tests run once on
 * {@code httpclient5.version} with the HttpCore it needs, and once on the floor the module supports
 * (the pom's {@code httpclient5-floor} execution), each run naming the versions it expects in
 * {@code headroom.httpclient5.expected} and {@code headroom.httpcore5.expected}. Without this, a
 * classpath that quietly kept one version would make the second run prove nothing. The versions
 * are read from each jar's own {@code VERSION.properties}, as HttpClient reports them.
 */
class HttpClientVersionTest {

  @Test
  void theRunHasTheHttpClientAndHttpCoreItNames() {
    String client = System.getProperty("headroom.httpclient5.expected");
    String core = System.getProperty("headroom.httpcore5.expected");
    assertThat(client).as("headroom.httpclient5.expected").isNotBlank();
    assertThat(core).as("headroom.httpcore5.expected").isNotBlank();
    assertThat(VersionInfo.loadVersionInfo("org.apache.hc.client5", HttpClients.class.getClassLoader()).getRelease())
        .as("HttpClient on the classpath").isEqualTo(client);
    assertThat(VersionInfo.loadVersionInfo("org.apache.hc.core5", HttpRequest.class.getClassLoader()).getRelease())
        .as("HttpCore on the classpath").isEqualTo(core);
  }
}
