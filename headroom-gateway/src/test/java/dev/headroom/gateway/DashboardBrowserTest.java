package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * The live dashboard in a real browser: Debian's headless Chromium, driven through its
 * chromedriver, opens {@code /dashboard} on the admin port of a gateway under load (one API key
 * flooding, others within their quota), and the page must draw its charts, keep updating them from
 * the event stream, and show the flooding key at the top of the refusals table as its {@code pk}
 * hash, and the queued requests of a policy with a queue (waiting, admitted, timed out). The page
 * reads as a person sees it: the heading is the service's name once (not "Headroom
 * Headroom demo"), each legend shows the latest second's values while no cursor is over its chart
 * (uPlot's "--" otherwise), and the time axis's ticks stand further apart than its widest label.
 * A screenshot is saved to {@code target/dashboard.png} (the root README's picture, {@code
 * docs/dashboard.png}, is a copy of one).
 *
 * <p>Needs {@code /usr/bin/chromium} and {@code /usr/bin/chromedriver} (Debian's {@code chromium}
 * and {@code chromium-driver}); {@code .ci/run} installs them when they are missing. Without them
 * this test fails: it does not skip.
 */
class DashboardBrowserTest {
  private static final String CHROMIUM = System.getProperty("headroom.chromium", "/usr/bin/chromium");
  private static final String CHROMEDRIVER = System.getProperty("headroom.chromedriver", "/usr/bin/chromedriver");

  @TempDir Path dir;
  TestUpstream upstream;
  Gateway gateway;
  WebDriver browser;
  final AtomicBoolean loading = new AtomicBoolean(true);
  final List<Thread> load = new ArrayList<>();
  final AtomicLong sent = new AtomicLong();

  @BeforeEach
  void start() throws Exception {
    upstream = new TestUpstream();
    Path config = dir.resolve("headroom.yaml");
    Files.writeString(config, """
        service: {name: Headroom demo, description: "A gateway under load, watched in a browser."}
        listen: {host: 127.0.0.1, port: 0}
        admin: {host: 127.0.0.1, port: 0}
        upstreams:
          up: {url: "http://127.0.0.1:%d"}
        policies:
          per-key:
            quota: 20
            window: 1m
            algorithm: token-bucket
            partition: api-key
            why: Twenty requests a minute per key.
          paced:
            quota: 5
            window: 1s
            algorithm: token-bucket
            partition: global
            why: Five requests a second, the rest wait their turn.
            queue: {maxWait: 2s, maxQueued: 100}
        routes:
          - {name: items, method: GET, path: "/items/{id}", upstream: up, policies: [per-key]}
          - {name: paced, method: GET, path: "/paced/{id}", upstream: up, policies: [paced]}
        """.formatted(upstream.port()));
    gateway = Gateway.builder(GatewayConfig.load(config)).threads(1).start();
    HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    URI items = URI.create("http://127.0.0.1:" + gateway.address().getPort() + "/items/1");
    load.add(loader(client, items, () -> "flooder-key", Duration.ofMillis(5)));
    AtomicLong n = new AtomicLong();
    load.add(loader(client, items, () -> "calm-key-" + (n.incrementAndGet() % 7), Duration.ofMillis(100)));
    URI paced = URI.create("http://127.0.0.1:" + gateway.address().getPort() + "/paced/1");
    for (int i = 0; i < 3; i++) { // three callers at once against five a second: they take turns in the queue
      load.add(loader(client, paced, () -> "paced-caller", Duration.ofMillis(50)));
    }
    load.forEach(Thread::start);
  }

  private Thread loader(HttpClient client, URI uri, Supplier<String> key, Duration pause) {
    return new Thread(() -> {
      while (loading.get()) {
        try {
          client.send(HttpRequest.newBuilder(uri).header("X-Api-Key", key.get()).timeout(Duration.ofSeconds(5)).build(),
              HttpResponse.BodyHandlers.discarding());
          sent.incrementAndGet();
          Thread.sleep(pause.toMillis()); // a steady load, not a benchmark
        } catch (InterruptedException e) {
          return;
        } catch (Exception e) {
          // the gateway closing at the end of the test
        }
      }
    }, "dashboard-load");
  }

  @AfterEach
  void stop() throws Exception {
    loading.set(false);
    for (Thread t : load) {
      t.interrupt();
      t.join(5_000);
    }
    if (browser != null) {
      browser.quit();
    }
    if (gateway != null) {
      gateway.close();
    }
    if (upstream != null) {
      upstream.close();
    }
  }

  @Test
  void theChartsUpdateLiveAndTheFloodingKeyTopsTheRefusals() throws Exception {
    ChromeOptions options = new ChromeOptions();
    options.setBinary(CHROMIUM);
    // headless as root on a closed network: no sandbox, no GPU, no background connections
    options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--window-size=1400,1100", "--user-data-dir=" + dir.resolve("chromium-profile"));
    ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(new File(CHROMEDRIVER))
        .usingAnyFreePort().build();
    browser = new ChromeDriver(service, options);
    browser.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(30));
    browser.get("http://127.0.0.1:" + gateway.adminAddress().orElseThrow().getPort() + "/dashboard");

    String flooding = ":" + Base64.getEncoder().encodeToString(pk("per-key", "key:" + sha256Hex("flooder-key"))) + ":";
    await(Duration.ofSeconds(30), "three updates, charts drawn, the flooder at the top of the refusals", () ->
        updates() >= 3 && points("chart-decisions") >= 2 && flooding.equals(firstPk("top-refused")));

    // the charts keep moving: more seconds drawn after a few more events
    int pointsBefore = points("chart-decisions");
    long updatesBefore = updates();
    await(Duration.ofSeconds(30), "the charts take new seconds", () ->
        updates() >= updatesBefore + 3 && points("chart-decisions") > pointsBefore);

    for (String chart : List.of("chart-decisions", "chart-refusals", "chart-latency", "chart-queue")) {
      assertThat(browser.findElements(By.cssSelector("#" + chart + " canvas"))).as(chart).isNotEmpty();
    }
    // the queue's chart, shown because a policy has a queue: its three series by name
    assertThat(browser.findElement(By.id("queue")).isDisplayed()).isTrue();
    assertThat(browser.findElements(By.cssSelector("#chart-queue .u-legend .u-label")).stream().map(WebElement::getText))
        .contains("paced waiting", "paced admitted", "paced timed out");
    WebElement top = browser.findElement(By.cssSelector("#top-refused tbody tr"));
    assertThat(top.getText()).contains("per-key").contains(flooding);
    assertThat(browser.findElement(By.id("status")).getText()).startsWith("Live");
    assertThat(browser.getPageSource()).doesNotContain("flooder-key").doesNotContain("calm-key");

    assertThat(browser.findElement(By.tagName("h1")).getText()).isEqualTo("Headroom demo");
    assertThat(browser.getTitle()).isEqualTo("Headroom demo: live usage");
    for (String chart : List.of("chart-decisions", "chart-refusals", "chart-latency", "chart-queue")) {
      List<String> legend = browser.findElements(By.cssSelector("#" + chart + " .u-legend .u-value")).stream()
          .map(WebElement::getText).toList();
      assertThat(legend).as("%s legend", chart).isNotEmpty().doesNotContain("--", "");
      assertThat(legend.get(0)).as("%s legend's time", chart).matches("\\d\\d:\\d\\d:\\d\\d");
      WebElement el = browser.findElement(By.id(chart));
      int label = Integer.parseInt(el.getAttribute("data-x-label"));
      assertThat(label).as("%s: widest time label, px", chart).isPositive();
      String gap = el.getAttribute("data-x-gap"); // empty while the axis has a single tick
      if (!gap.isEmpty()) {
        assertThat(Integer.parseInt(gap))
            .as("%s: narrowest gap between time ticks, px, against the widest label", chart)
            .isGreaterThan(label);
      }
    }

    File shot = ((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE);
    Path saved = Path.of("target", "dashboard.png");
    Files.createDirectories(saved.getParent());
    Files.copy(shot.toPath(), saved, StandardCopyOption.REPLACE_EXISTING);
    assertThat(Files.size(saved)).isGreaterThan(10_000);
    assertThat(sent.get()).isPositive();
  }

  private long updates() {
    return Long.parseLong(browser.findElement(By.tagName("body")).getAttribute("data-updates"));
  }

  private int points(String chart) {
    String p = browser.findElement(By.id(chart)).getAttribute("data-points");
    return p == null ? 0 : Integer.parseInt(p);
  }

  private String firstPk(String table) {
    List<WebElement> rows = browser.findElements(By.cssSelector("#" + table + " tbody tr"));
    return rows.isEmpty() ? null : rows.get(0).getAttribute("data-pk");
  }

  private static void await(Duration limit, String what, Supplier<Boolean> done) throws InterruptedException {
    long deadline = System.nanoTime() + limit.toNanos();
    while (!done.get()) {
      assertThat(System.nanoTime()).as("waited %s for %s", limit, what).isLessThan(deadline);
      Thread.sleep(250);
    }
  }

  private static byte[] pk(String policy, String key) throws Exception {
    MessageDigest sha = MessageDigest.getInstance("SHA-256");
    sha.update(policy.getBytes(StandardCharsets.UTF_8));
    sha.update((byte) 0);
    sha.update(key.getBytes(StandardCharsets.UTF_8));
    return Arrays.copyOf(sha.digest(), 16);
  }

  private static String sha256Hex(String s) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)), 0, 16);
  }
}
