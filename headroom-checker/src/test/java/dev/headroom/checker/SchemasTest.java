package dev.headroom.checker;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What a user reads when a body breaks a Graceful Boundaries schema (section 1, the limits
 * document; section 2, the refusal): each violation names where in the document it is, as a JSON
 * path from {@code $}, and what the schema expected there.
 */
class SchemasTest {

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private static List<String> violations(String json) throws Exception {
    return Schemas.violations(Schemas.REFUSAL_429, MAPPER.readTree(json));
  }

  @Test
  void aValid429RefusalHasNoViolations() throws Exception {
    assertThat(violations("{\"error\":\"rate_limited\",\"detail\":\"slow down\",\"why\":\"too many\","
        + "\"limit\":\"5 per minute\",\"retryAfterSeconds\":3}")).isEmpty();
  }

  @Test
  void aMissingFieldAndAnEmptyOneAreEachNamed() throws Exception {
    assertThat(violations("{\"error\":\"rate_limited\",\"detail\":\"slow down\",\"why\":\"\",\"limit\":\"5 per minute\"}"))
        .containsExactly(
            "$.why: must be at least 1 characters long",
            "$: required property 'retryAfterSeconds' not found");
  }

  @Test
  void aWrongTypeSaysWhatWasFoundAndWhatWasExpected() throws Exception {
    assertThat(violations("{\"error\":\"rate_limited\",\"detail\":\"slow down\",\"why\":\"too many\","
        + "\"limit\":\"5 per minute\",\"retryAfterSeconds\":\"soon\"}"))
        .containsExactly("$.retryAfterSeconds: string found, integer expected");
  }

  @Test
  void theLimitsDocumentsViolationsAreSortedByPlace() throws Exception {
    assertThat(Schemas.violations(Schemas.LIMITS, MAPPER.readTree("{\"service\":1,\"limits\":[{\"endpoint\":5}]}")))
        .containsExactly(
            "$.limits: array found, object expected",
            "$.service: integer found, string expected",
            "$: required property 'description' not found");
  }
}
