package dev.headroom.client.okhttp;

import static org.assertj.core.api.Assertions.assertThat;

import okhttp3.OkHttp;
import org.junit.jupiter.api.Test;

/**
 * Which OkHttp this test run has: the module's tests run once on OkHttp 4.12, the floor it compiles
 * against, and once on OkHttp 5 (the pom's {@code okhttp5} execution), each run naming the version
 * it expects in {@code headroom.okhttp.expected}. Without this, a classpath that quietly kept 4.12
 * would make the second run prove nothing. {@code OkHttp.VERSION} is a compile-time constant, which
 * javac copies into this class, so it is read from the class on the classpath, reflectively.
 */
class OkHttpVersionTest {

  @Test
  void theRunHasTheOkHttpItNames() throws ReflectiveOperationException {
    String expected = System.getProperty("headroom.okhttp.expected");
    assertThat(expected).as("headroom.okhttp.expected").isNotBlank();
    assertThat(OkHttp.class.getField("VERSION").get(null)).isEqualTo(expected);
  }
}
