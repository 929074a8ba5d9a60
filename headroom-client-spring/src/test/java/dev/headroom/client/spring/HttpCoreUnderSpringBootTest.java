package dev.headroom.client.spring;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.hc.client5.http.impl.async.HttpAsyncClients;
import org.apache.hc.core5.http.HttpRequest;
import org.apache.hc.core5.util.VersionInfo;
import org.junit.jupiter.api.Test;

/**
 * This module imports Spring Boot's BOM, which manages an HttpCore older than the one HttpClient
 * 5.4.2 and later need; on that HttpCore the async client's I/O thread dies of a
 * {@code NoSuchMethodError} and async exchanges never complete. The parent pom pins HttpCore past
 * the BOM: this test checks that the pin, not the BOM, decided the version on this classpath
 * ({@code OneBudgetAcrossTransportsTest} exercises the async client on it).
 */
class HttpCoreUnderSpringBootTest {

  @Test
  void httpCoreIsTheOneHttpClientNeeds_notTheBomsOlderOne() {
    String expected = System.getProperty("headroom.httpcore5.expected");
    assertThat(expected).as("headroom.httpcore5.expected").isNotBlank();
    assertThat(VersionInfo.loadVersionInfo("org.apache.hc.core5", HttpRequest.class.getClassLoader()).getRelease())
        .as("HttpCore on the classpath").isEqualTo(expected);
    assertThat(VersionInfo.loadVersionInfo("org.apache.hc.client5", HttpAsyncClients.class.getClassLoader()).getRelease())
        .as("HttpClient on the classpath").startsWith("5.6");
  }
}
