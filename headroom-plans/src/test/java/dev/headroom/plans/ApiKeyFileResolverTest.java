package dev.headroom.plans;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.enforcement.partition.ApiKeys;
import dev.headroom.enforcement.partition.RequestView;
import dev.headroom.enforcement.plan.PlanResolution;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The key file: hashes only, one key a line; a reload that does not read keeps the keys in force. */
class ApiKeyFileResolverTest {
  @TempDir Path dir;

  static PlanResolution resolve(ApiKeyFileResolver r, String... keys) {
    RequestView.Builder b = RequestView.builder();
    for (String k : keys) {
      b.header("X-Api-Key", k);
    }
    return r.resolve(b.build()).toCompletableFuture().join();
  }

  @Test
  void aKeyIsFoundByItsHashAndAnythingElseIsAnonymous() throws Exception {
    Path f = dir.resolve("keys");
    Files.writeString(f, "# comment\n\n" + ApiKeys.sha256("k1") + " pro\n" + ApiKeys.sha256("k2").toUpperCase() + "\tfree\n");
    ApiKeyFileResolver r = ApiKeyFileResolver.of(f, "X-Api-Key");
    assertThat(Files.readString(f)).doesNotContain("k1 ");
    assertThat(resolve(r, "k1")).isEqualTo(new PlanResolution.Named("pro"));
    assertThat(resolve(r, "k2")).isEqualTo(new PlanResolution.Named("free"));
    assertThat(resolve(r, "k3")).isEqualTo(PlanResolution.anonymous());
    assertThat(resolve(r)).isEqualTo(PlanResolution.anonymous());
    assertThat(resolve(r, "k1", "k2")).isEqualTo(PlanResolution.anonymous()); // two keys: none
    assertThat(resolve(r, "x".repeat(ApiKeys.MAX_KEY_LENGTH + 1))).isEqualTo(PlanResolution.anonymous());
  }

  @Test
  void aReloadThatDoesNotReadKeepsTheKeysInForce() throws Exception {
    Path f = dir.resolve("keys");
    Files.writeString(f, ApiKeys.sha256("k1") + " pro\n");
    ApiKeyFileResolver r = ApiKeyFileResolver.of(f, "X-Api-Key");
    Files.writeString(f, "");
    assertThatThrownBy(r::reload).hasMessageContaining("is empty");
    Files.writeString(f, ApiKeys.sha256("k1") + " pro\n" + ApiKeys.sha256("k1") + " free\n");
    assertThatThrownBy(r::reload).hasMessageContaining("line 2").hasMessageContaining("appears twice");
    assertThat(resolve(r, "k1")).isEqualTo(new PlanResolution.Named("pro"));
    Files.writeString(f, ApiKeys.sha256("k1") + " free\n");
    r.reload();
    assertThat(resolve(r, "k1")).isEqualTo(new PlanResolution.Named("free"));
  }
}
