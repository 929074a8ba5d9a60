package dev.headroom.checker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.ManualTicker;
import dev.headroom.client.TestServer;
import dev.headroom.client.VendorPeers;
import dev.headroom.http.headers.VendorDialect;
import java.net.http.HttpClient;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code headroom check URL} against a real loopback service speaking each vendor's dialect
 * (10 requests per 5 s): the report names the dialect and the vendor, and says what a client reads
 * of its budgets.
 */
class VendorDialectCheckTest {

  private static final HttpClient HTTP = HttpClient.newHttpClient();

  static VendorDialect dialectOf(VendorPeers.Form form) {
    return form == VendorPeers.Form.OKTA ? VendorDialect.X_RATE_LIMIT : VendorDialect.valueOf(form.name());
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(value = VendorPeers.Form.class, names = "RETRY_AFTER_DATE", mode = EnumSource.Mode.EXCLUDE)
  void theReportNamesTheVendorsDialectAndWhatWasRead(VendorPeers.Form form) throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    try (TestServer server = new TestServer(ticker, VendorPeers.server(form, ticker, 10, Duration.ofSeconds(5)))) {
      Report report = Checker.builder(HTTP).ticker(ticker).probe(3).probeEndpoint("/api/items").build()
          .check(server.uri("/"));
      VendorDialect d = dialectOf(form);
      assertThat(report.vendors()).containsExactly(d);
      assertThat(report.readings()).isNotEmpty().allSatisfy(r -> assertThat(r).startsWith(d.token()));
      assertThat(report.toText()).contains("Vendor dialects: " + d.token() + " (" + d.vendor() + ")", "Read:");
      assertThat(report.toJson()).contains("\"vendorDialects\" : [ \"" + d.token() + "\" ]");
      if (form != VendorPeers.Form.AZURE_RESOURCE_MANAGER) {
        assertThat(report.readings()).anySatisfy(r -> assertThat(r).contains(" of ", " left, back in "));
      }
    }
  }

  @Test
  void openAiTokenBudgetIsReadInTokens() throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    try (TestServer server = new TestServer(ticker,
        VendorPeers.server(VendorPeers.Form.OPENAI, ticker, 10, Duration.ofSeconds(5)))) {
      Report report = Checker.builder(HTTP).ticker(ticker).probe(1).probeEndpoint("/api/items").build()
          .check(server.uri("/"));
      assertThat(report.readings()).contains("openai \"tokens\": 149000 of 150000 tokens left, back in 360 s");
    }
  }
}
