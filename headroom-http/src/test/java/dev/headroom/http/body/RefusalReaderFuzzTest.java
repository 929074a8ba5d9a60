package dev.headroom.http.body;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;

/**
 * Coverage-guided fuzzing of {@link RefusalReader}: whatever bytes arrive, reading either gives a
 * refusal or throws {@link RefusalParseException}, and what it gives writes and reads back the
 * same.
 *
 * <p>{@code mvn verify} replays the committed inputs in
 * {@code src/test/resources/dev/headroom/http/body/RefusalReaderFuzzTestInputs/read/}. To fuzz for
 * five minutes (one fuzz test per run):
 *
 * <pre>
 * JAZZER_FUZZ=1 mvn -B -pl headroom-http -am test -Dtest=RefusalReaderFuzzTest -Dsurefire.failIfNoSpecifiedTests=false
 * </pre>
 *
 * <p>Findings land next to the inputs as {@code crash-*} files; commit them to keep them replayed.
 */
class RefusalReaderFuzzTest {

  private static final RefusalReader READER = RefusalReader.builder().maxBytes(4096).maxDepth(8).build();

  @FuzzTest(maxDuration = "5m") // the length of a JAZZER_FUZZ=1 run; regression runs replay the inputs only
  void read(byte[] body) {
    Refusal r;
    try {
      r = READER.read(429, body);
    } catch (RefusalParseException expected) {
      return;
    }
    assertThat(r.status()).isEqualTo(429);
    assertThat(r.extensions().size()).isLessThanOrEqualTo(Refusal.MAX_EXTENSIONS);
    byte[] again = r.toJsonBytes();
    if (again.length <= 4096) {
      assertThat(READER.read(429, again)).isEqualTo(r);
    }
    RefusalHtml.render(r, r.alternativeEndpoint().orElse(null));
  }
}
