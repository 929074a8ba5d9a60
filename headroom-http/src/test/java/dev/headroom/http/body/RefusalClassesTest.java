package dev.headroom.http.body;

import static dev.headroom.http.body.GracefulBoundariesSchemas.REFUSAL;
import static dev.headroom.http.body.GracefulBoundariesSchemas.violations;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Graceful Boundaries section 6: every response class has its core and class fields. */
class RefusalClassesTest {

  private static void conformant(Refusal r) {
    assertThat(violations(REFUSAL, r.toJson())).as(r.toJson()).isEmpty();
    assertThat(RefusalReader.defaults().read(r.status(), r.toJsonBytes())).isEqualTo(r);
  }

  @Test
  void inputClass_400_405_422() {
    Refusal invalid = Refusal.builder(400).error("invalid_input").detail("The 'email' field must be an email address.")
        .why("Validation keeps malformed data out of the records.").field("email")
        .expected("An email address such as user@example.com").build();
    conformant(invalid);
    assertThat(invalid.title()).contains("Bad Request");
    Refusal method = Refusal.builder(405).error("method_not_allowed").detail("This endpoint only reads.")
        .why("Changes go through the write API, which checks ownership.").allowedMethods(List.of("GET", "HEAD")).build();
    conformant(method);
    assertThat(method.toJson()).contains("\"allowedMethods\":[\"GET\",\"HEAD\"]");
    conformant(Refusal.builder(422).error("validation_failed").detail("The end date is before the start date.")
        .why("Date ranges must be meaningful to be billed.").field("end").build());
  }

  @Test
  void accessClass_401_403() {
    conformant(Refusal.builder(401).error("authentication_required").detail("An API key is required.")
        .why("Keys let usage be attributed and protected.").authUrl("https://example.com/api/keys")
        .humanUrl("https://example.com/signup").build());
    conformant(Refusal.builder(403).error("forbidden").detail("Batch access needs a key with the batch scope.")
        .why("Batch access is authenticated to prevent abuse and track usage.").alternativeEndpoint("/api/scan")
        .upgradeUrl("https://example.com/pricing").build());
  }

  @Test
  void notFoundClass_404_410() {
    conformant(Refusal.builder(404).error("result_not_found").detail("No result exists for example.com yet.")
        .why("Results are kept for 30 days after they are made.").scanAvailable(true)
        .scanUrl("/api/scan?url=https://example.com").build());
    conformant(Refusal.builder(410).error("gone").detail("This export expired.")
        .why("Exports are kept for a week to limit stored personal data.").build());
  }

  @Test
  void availabilityClass_5xx() {
    conformant(Refusal.builder(503).error("service_unavailable").detail("Result storage is temporarily unavailable.")
        .why("The storage backend is unreachable; this is usually transient.").retryAfterSeconds(60)
        .statusUrl("https://status.example.com").build());
    conformant(Refusal.builder(500).error("internal_error").detail("Something failed while handling the request.")
        .why("An internal component failed; the failure has been recorded.").build());
    conformant(Refusal.builder(502).error("upstream_error").detail("The upstream answered with an error.")
        .why("This service depends on an upstream that is failing.").instance("urn:uuid:1b4e28ba-2fa1-11d2-883f-0016d3cca427")
        .extension("traceId", "abc123").build());
  }
}
