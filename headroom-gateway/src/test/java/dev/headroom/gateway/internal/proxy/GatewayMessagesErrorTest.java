package dev.headroom.gateway.internal.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.Ticker;
import dev.headroom.gateway.GatewayConfig;
import dev.headroom.gateway.internal.GatewayServer;
import dev.headroom.gateway.internal.proxy.HttpVocabulary.GatewayError;
import dev.headroom.http.body.RefusalFormat;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The gateway's own error responses always reach the caller: a text headroom-http refuses (a
 * quoted detail that is not sendable, or a why naming a mechanism, Graceful Boundaries SC-2) is
 * replaced by a plain one rather than failing the exchange.
 */
class GatewayMessagesErrorTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final GatewayMessages vocabulary = GatewayMessages.of(GatewayServer.sections(GatewayConfig.sample()), Ticker.system());

  private JsonNode body(LocalResponse r) throws Exception {
    return JSON.readTree(r.body());
  }

  @Test
  void anErrorWithSendableTextsIsSentAsWritten() throws Exception {
    LocalResponse r = vocabulary.error(new GatewayError(502, "upstream_unavailable", "The upstream did not answer.",
        "Callers are told when the service behind the gateway is down.", Map.of()), RefusalFormat.JSON, "/x");
    assertThat(r.status().code()).isEqualTo(502);
    assertThat(body(r).path("detail").asText()).isEqualTo("The upstream did not answer.");
    assertThat(body(r).path("why").asText()).isEqualTo("Callers are told when the service behind the gateway is down.");
  }

  @Test
  void aWhyThatNamesAMechanismFallsBackToPlainTextsAndStillAnswers() throws Exception {
    LocalResponse r = vocabulary.error(new GatewayError(502, "upstream_response_undeliverable", "Quoted detail.",
        "Refused because of the token bucket algorithm (RFC 9112 section 6.1).", Map.of()), RefusalFormat.JSON, "/x");
    assertThat(r.status().code()).isEqualTo(502);
    JsonNode b = body(r);
    assertThat(b.path("error").asText()).isEqualTo("upstream_response_undeliverable");
    assertThat(b.path("detail").asText()).isEqualTo("The request could not be completed (502).");
    assertThat(b.path("why").asText()).isEqualTo(GatewayMessages.FALLBACK_WHY);
    assertThat(r.head()).isNotEmpty();
  }
}
