package dev.headroom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Proxy;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link StoreHealth}: what a health check reads of a store, whichever the store. */
class StoreHealthTest {

  /** A store of an application's own, which tells nothing of its state (never asked to decide here). */
  static final Store OWN = (Store) Proxy.newProxyInstance(Store.class.getClassLoader(), new Class<?>[] {Store.class},
      (proxy, method, args) -> {
        throw new UnsupportedOperationException(method.getName());
      });

  @Test
  void inMemoryStoreIsUpWithItsKeysAndNeverFailsClosed() {
    InMemoryStore store = InMemoryStore.builder().maxKeys(10).build();
    StoreHealth h = StoreHealth.of(store, true);
    assertThat(h.status()).isEqualTo(StoreHealth.Status.UP);
    assertThat(h.failsClosed()).isFalse();
    assertThat(h.details()).containsExactly(Map.entry("type", "in-memory"), Map.entry("keys", 0L),
        Map.entry("maxKeys", 10L));
  }

  @Test
  void aStoreThatTellsNothingIsUpWithItsType() {
    StoreHealth h = StoreHealth.of(OWN, true);
    assertThat(h.status()).isEqualTo(StoreHealth.Status.UP);
    assertThat(h.failsClosed()).isFalse();
    assertThat(h.details()).containsExactly(Map.entry("type", OWN.getClass().getName()));
  }

  @Test
  void theUriIsShownAfterTheTypeWithoutCredentials() {
    StoreHealth h = new StoreHealth(StoreHealth.Status.DOWN, true, Map.of("type", "redis"))
        .withUri("redis://default:secret@10.0.0.5:6380/2");
    assertThat(h.details()).containsExactly(Map.entry("type", "redis"), Map.entry("uri", "redis://10.0.0.5:6380/2"));
    assertThat(h.status()).isEqualTo(StoreHealth.Status.DOWN);
    assertThat(h.failsClosed()).isTrue();
    assertThat(h.withUri(null)).isSameAs(h);
    assertThat(h.withUri(" ")).isSameAs(h);
    assertThat(h.withUri("not a uri ::")).isSameAs(h);
  }

  @Test
  void detailsCannotBeChanged() {
    StoreHealth h = StoreHealth.of(OWN, false);
    assertThatThrownBy(() -> h.details().put("x", 1)).isInstanceOf(UnsupportedOperationException.class);
  }
}
