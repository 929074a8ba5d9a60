package dev.headroom.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The demo's walk, line by line. The numbers follow from the class comments of {@code Gcra} and
 * {@code FixedWindow}: burst q=5, w=10 s gives T=2 s; five requests 100 ms apart leave r=0 with the
 * bucket full again at TAT=10 s; the sixth, at 0.5 s, needs TAT=12 s and waits 12-10-0.5 = 1.5 s
 * (Retry-After 2); the daily policy consumes nothing for refused requests (all or nothing).
 */
class DemoTest {

  @Test
  void printsEveryDecisionOfTheWalk() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    Demo.run(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    String[] lines = bytes.toString(StandardCharsets.UTF_8).split("\\R");
    assertThat(lines).containsExactly(
        "policies: QuotaPolicy{burst;q=5;qu=requests;w=10;algorithm=token-bucket;partitioning=client-ip}, "
            + "QuotaPolicy{daily;q=1000;qu=requests;w=86400;algorithm=fixed-window;partitioning=client-ip}",
        "request  1 at +   0 ms: allowed  burst r=4 t=2  daily r=999 t=86400",
        "request  2 at + 100 ms: allowed  burst r=3 t=4  daily r=998 t=86400",
        "request  3 at + 200 ms: allowed  burst r=2 t=6  daily r=997 t=86400",
        "request  4 at + 300 ms: allowed  burst r=1 t=8  daily r=996 t=86400",
        "request  5 at + 400 ms: allowed  burst r=0 t=10  daily r=995 t=86400",
        "request  6 at + 500 ms: refused, Retry-After 2 s  burst r=0 t=10  daily r=995 t=86400",
        "request  7 at + 600 ms: refused, Retry-After 2 s  burst r=0 t=10  daily r=995 t=86400",
        "request  8 at + 700 ms: refused, Retry-After 2 s  burst r=0 t=10  daily r=995 t=86400",
        "request  9 at + 800 ms: refused, Retry-After 2 s  burst r=0 t=10  daily r=995 t=86400",
        "request 10 at + 900 ms: refused, Retry-After 2 s  burst r=0 t=10  daily r=995 t=86400",
        "request 11 at +1000 ms: refused, Retry-After 1 s  burst r=0 t=9  daily r=995 t=86399",
        "request 12 at +1100 ms: refused, Retry-After 1 s  burst r=0 t=9  daily r=995 t=86399");
  }
}
