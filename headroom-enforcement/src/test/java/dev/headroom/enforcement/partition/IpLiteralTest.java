package dev.headroom.enforcement.partition;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** IP literals are parsed without DNS and formatted per RFC 5952. */
class IpLiteralTest {

  @ParameterizedTest
  @CsvSource({
      "192.0.2.1, 192.0.2.1",
      "0.0.0.0, 0.0.0.0",
      "255.255.255.255, 255.255.255.255",
      "2001:db8::1, 2001:db8::1",
      "2001:DB8:0:0:0:0:0:1, 2001:db8::1",
      "::, ::",
      "::1, ::1",
      "1::, 1::",
      "2001:db8:0:0:1:0:0:1, 2001:db8::1:0:0:1",
      "2001:0db8:0000:0000:0000:ff00:0042:8329, 2001:db8::ff00:42:8329",
      "1:2:3:4:5:6:7:8, 1:2:3:4:5:6:7:8",
      "1:0:3:4:5:6:7:8, 1:0:3:4:5:6:7:8",
      "::ffff:192.0.2.1, 192.0.2.1",
      "::FFFF:c000:0201, 192.0.2.1",
      "1:2:3:4:5:6:192.0.2.1, 1:2:3:4:5:6:c000:201",
  })
  void parsesAndFormatsCanonically(String text, String canonical) {
    assertThat(IpLiteral.parse(text).map(IpLiteral::format)).contains(canonical);
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "1.2.3", "1.2.3.4.5", "256.0.0.1", "010.0.0.1", "1.2.3.-1", "1.2.3.4 ",
      " 1.2.3.4", "a.b.c.d", "localhost", "example.com", ":::", "1:::2", "1::2::3", "12345::1",
      "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7:8::", ":1:2:3:4:5:6:7", "1:2:3:4:5:6:7:", "::1.2.3",
      "fe80::1%eth0", "[::1]", "g::1", "\uff11.2.3.4", "1:2:3:4:5:6:7:1.2.3.4"})
  void refusesWhatIsNotExactlyOneLiteral(String text) {
    assertThat(IpLiteral.parse(text)).isEqualTo(Optional.empty());
  }

  @ParameterizedTest
  @CsvSource({"2001:db8:1:2:3:4:5:6, 64, 2001:db8:1:2::", "192.0.2.255, 24, 192.0.2.0"})
  void masksToAPrefix(String text, int prefix, String masked) {
    assertThat(IpLiteral.format(IpLiteral.mask(IpLiteral.parse(text).orElseThrow(), prefix))).isEqualTo(masked);
  }
}
