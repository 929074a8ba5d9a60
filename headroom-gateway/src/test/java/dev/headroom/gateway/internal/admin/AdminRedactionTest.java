package dev.headroom.gateway.internal.admin;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The password of every URI in the configuration text is hidden before {@code /config} serves it. */
class AdminRedactionTest {

  @Test
  void passwordsInUrisAreReplacedAndTheRestKept() {
    assertThat(AdminHandler.redactPasswords("uri: redis://:s3cret@10.0.0.5:6379/0"))
        .isEqualTo("uri: redis://:***@10.0.0.5:6379/0");
    assertThat(AdminHandler.redactPasswords("uri: \"rediss://default:p@ss-word@cache:6380\""))
        .isEqualTo("uri: \"rediss://default:***@cache:6380\"");
    assertThat(AdminHandler.redactPasswords("a: https://user:pw@host/x, b: http://other:pw2@h2"))
        .isEqualTo("a: https://user:***@host/x, b: http://other:***@h2");
    // no user info, or a user without a password: nothing to hide
    assertThat(AdminHandler.redactPasswords("uri: redis://127.0.0.1:6379")).isEqualTo("uri: redis://127.0.0.1:6379");
    assertThat(AdminHandler.redactPasswords("url: http://user@host:80")).isEqualTo("url: http://user@host:80");
    assertThat(AdminHandler.redactPasswords("time: 10:30, mail: a@b")).isEqualTo("time: 10:30, mail: a@b");
  }
}
