package dev.headroom.gateway.internal.admin;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.headroom.enforcement.partition.PartitionKeyExposures;
import dev.headroom.gateway.config.Policy;
import dev.headroom.gateway.internal.Timers;
import io.micrometer.core.instrument.Measurement;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.concurrent.EventExecutor;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The admin listener's live usage dashboard: {@code GET /dashboard} (a page drawing charts with
 * uPlot, served from the jar: nothing outside the machine is fetched), {@code GET /usage} (the same
 * data as JSON) and {@code GET /usage/stream} (server-sent events: the JSON again every second, as
 * {@code event: usage}, WHATWG HTML "Server-sent events").
 *
 * <p>Once a second on the gateway's ticker ({@link Timers}), it samples the gateway's cumulative
 * meters (decisions, store latency, the policies' queues: waiting, admitted, timed out) into the {@link UsageBoard} and pushes the new state to every stream. A stream whose
 * client reads too slowly to take the next event (its channel not writable) misses that event
 * rather than making the gateway hold it: memory stays bounded whatever the client does. At most
 * {@value #MAX_STREAMS} streams are open at once.
 *
 * <p>What it shows never includes a secret: partitions appear as the predictable {@code pk} hash
 * (draft-ietf-httpapi-ratelimit-headers-09 section 3.1.4), the store as its kind and meters, never
 * its URI.
 */
public final class Dashboard {
  /** Streams open at once; one more gets 503. */
  static final int MAX_STREAMS = 16;
  /** Rows of each heavy-hitter table. */
  static final int TOP = 10;

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final long SECOND = 1_000_000_000L;
  private static final Map<String, String> PROBLEM_TYPES = Map.of(
      "refused", "quota-exceeded", "reduced", "temporary-reduced-capacity", "blocked", "abnormal-usage-detected");

  private final LiveGateway gateway;
  private final MeterRegistry registry;
  private final Timers timers;
  private final EventExecutor loop;
  private final Set<Channel> streams = ConcurrentHashMap.newKeySet();
  private volatile Timers.Timer next;
  private volatile boolean stopped;

  /**
   * A dashboard of {@code gateway}, not yet sampling (see {@link #start}).
   *
   * @param registry the registry whose {@code headroom.store.*} meters it shows
   * @param timers the gateway's ticker, which paces the samples
   * @param loop the event loop the streams are written from
   */
  public Dashboard(LiveGateway gateway, MeterRegistry registry, Timers timers, EventExecutor loop) {
    this.gateway = gateway;
    this.registry = registry;
    this.timers = timers;
    this.loop = loop;
  }

  /** Takes the first reading and samples once a second from then on. */
  public void start() {
    loop.execute(() -> {
      long now = timers.now();
      gateway.metrics().board().sample(now / 1_000_000L, gateway.metrics().totals());
      arm(now + SECOND);
    });
  }

  /** Stops sampling and ends every stream. */
  public void stop() {
    stopped = true;
    Timers.Timer t = next;
    if (t != null) {
      t.cancel();
    }
    streams.forEach(Channel::close);
  }

  private void arm(long deadline) {
    if (!stopped) {
      next = timers.schedule(loop, deadline, () -> tick(deadline));
    }
  }

  private void tick(long deadline) {
    gateway.metrics().board().sample(deadline / 1_000_000L, gateway.metrics().totals());
    if (!streams.isEmpty()) {
      byte[] event = event(usage());
      for (Channel c : streams) {
        if (c.isActive() && c.isWritable()) {
          c.writeAndFlush(new DefaultHttpContent(Unpooled.wrappedBuffer(event)));
        }
      }
    }
    // the next second after this one, or a second from now if the loop fell behind by more than one
    long now = timers.now();
    arm(deadline + SECOND > now ? deadline + SECOND : now + SECOND);
  }

  /** Opens a stream on {@code ctx}: the head, the current state at once, then one event a second. */
  void stream(ChannelHandlerContext ctx) {
    if (streams.size() >= MAX_STREAMS) {
      ctx.writeAndFlush(AdminHandler.problem(HttpResponseStatus.SERVICE_UNAVAILABLE, "too_many_streams",
          "The admin listener already serves " + MAX_STREAMS + " usage streams.",
          "Each stream is pushed a snapshot every second; the number is bounded so that watchers cannot "
              + "take the gateway's memory.", "Close another dashboard, or read GET /usage instead."))
          .addListener(ChannelFutureListener.CLOSE);
      return;
    }
    HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
    head.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream; charset=utf-8")
        .set(HttpHeaderNames.CACHE_CONTROL, "no-store")
        .set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
    Channel c = ctx.channel();
    streams.add(c);
    c.closeFuture().addListener(f -> streams.remove(c));
    ctx.write(head);
    // retry: how long a browser waits before reconnecting a dropped stream (milliseconds)
    ctx.write(new DefaultHttpContent(Unpooled.copiedBuffer("retry: 2000\n\n", StandardCharsets.UTF_8)));
    ctx.writeAndFlush(new DefaultHttpContent(Unpooled.wrappedBuffer(event(usage()))));
  }

  int streams() {
    return streams.size();
  }

  private static byte[] event(ObjectNode usage) {
    return ("event: usage\ndata: " + usage.toString() + "\n\n").getBytes(StandardCharsets.UTF_8);
  }

  /** Everything the page shows, as one JSON object (the {@code /usage} document). */
  ObjectNode usage() {
    ObjectNode n = JSON.createObjectNode();
    n.put("service", gateway.config().service().name());
    n.put("time", timers.now() / 1_000_000L);
    n.put("seconds", UsageBoard.SECONDS);
    List<UsageBoard.Sample> samples = gateway.metrics().board().samples();

    ArrayNode times = n.putArray("t");
    samples.forEach(s -> times.add(s.epochMillis() / 1000));
    ObjectNode policies = n.putObject("decisions");
    Map<String, ObjectNode> totals = new TreeMap<>();
    for (String policy : policyNames(samples, gateway.config().policies().keySet())) {
      ObjectNode byOutcome = policies.putObject(policy);
      ObjectNode total = JSON.createObjectNode();
      totals.put(policy, total);
      for (String outcome : outcomes(samples, policy)) {
        ArrayNode series = byOutcome.putArray(outcome);
        long sum = 0;
        for (UsageBoard.Sample s : samples) {
          long v = s.decisions().getOrDefault(policy, Map.of()).getOrDefault(outcome, 0L);
          series.add(v);
          sum += v;
        }
        total.put(outcome, sum);
      }
    }
    n.putObject("totals").setAll(totals);

    ObjectNode types = n.putObject("refusalsByType");
    PROBLEM_TYPES.values().stream().sorted().forEach(type -> {
      ArrayNode series = types.putArray(type);
      for (UsageBoard.Sample s : samples) {
        long v = 0;
        for (Map<String, Long> byOutcome : s.decisions().values()) {
          for (Map.Entry<String, Long> e : byOutcome.entrySet()) {
            if (type.equals(PROBLEM_TYPES.get(e.getKey()))) {
              v += e.getValue();
            }
          }
        }
        series.add(v);
      }
    });

    ObjectNode latency = n.putObject("latencyMicros");
    ArrayNode p50 = latency.putArray("p50");
    ArrayNode p99 = latency.putArray("p99");
    ArrayNode mean = latency.putArray("mean");
    for (UsageBoard.Sample s : samples) {
      addMicros(p50, UsageBoard.quantile(s, 0.50));
      addMicros(p99, UsageBoard.quantile(s, 0.99));
      addMicros(mean, s.latencyCount() == 0 ? Double.NaN : s.latencyTotalNanos() / s.latencyCount());
    }

    queues(n.putObject("queue"), samples);

    hitters(n.putArray("topRefused"), gateway.metrics().board().topRefused(TOP));
    hitters(n.putArray("topUsed"), gateway.metrics().board().topUsed(TOP));

    ObjectNode capacity = n.putObject("capacity");
    for (Policy p : gateway.config().policies().values()) {
      capacity.put(p.name(), gateway.capacity().factor(p.name()).orElse(1.0));
    }
    n.set("store", store());
    return n;
  }

  /**
   * The policies' queues ({@code policies.NAME.queue}), three series each: requests waiting at each
   * second, and requests admitted and timed out after waiting in it. Every policy configured with a
   * queue is there (zeros before anything waited), and one a reload removed while its meters remain.
   */
  private void queues(ObjectNode out, List<UsageBoard.Sample> samples) {
    Set<String> names = new TreeSet<>();
    gateway.config().policies().values().forEach(p -> p.queue().ifPresent(q -> names.add(p.name())));
    samples.forEach(s -> names.addAll(s.queues().keySet()));
    UsageBoard.Queue none = new UsageBoard.Queue(0, 0, 0);
    for (String policy : names) {
      ArrayNode waiting = out.putArray(policy + " waiting");
      ArrayNode admitted = out.putArray(policy + " admitted");
      ArrayNode timedOut = out.putArray(policy + " timed out");
      for (UsageBoard.Sample s : samples) {
        UsageBoard.Queue q = s.queues().getOrDefault(policy, none);
        waiting.add(q.waiting());
        admitted.add(q.admitted());
        timedOut.add(q.timeouts());
      }
    }
  }

  private static void addMicros(ArrayNode a, double nanos) {
    if (Double.isNaN(nanos) || Double.isInfinite(nanos)) {
      a.addNull();
    } else {
      a.add(Math.round(nanos / 10.0) / 100.0);
    }
  }

  private void hitters(ArrayNode out, List<UsageBoard.Hitter> top) {
    Map<String, Policy> policies = gateway.config().policies();
    for (UsageBoard.Hitter h : top) {
      ObjectNode row = out.addObject();
      row.put("policy", h.partition().policy());
      Policy p = policies.get(h.partition().policy());
      // the predictable hash a client computes for its own partition: shown as the pk parameter is
      // written (a Structured Field byte sequence, RFC 9651 section 3.3.5), never the raw key
      Optional<byte[]> pk = p == null ? Optional.empty()
          : PartitionKeyExposures.predictableHash().pk(p.quota(), h.partition().key());
      row.put("pk", pk.map(b -> ":" + Base64.getEncoder().encodeToString(b) + ":").orElse("(policy removed)"));
      row.put("count", h.count());
      row.put("error", h.error());
    }
  }

  private ObjectNode store() {
    ObjectNode s = JSON.createObjectNode();
    s.put("type", gateway.config().store().type().name().toLowerCase(Locale.ROOT));
    ObjectNode meters = s.putObject("meters");
    Map<String, Double> values = new TreeMap<>();
    for (Meter m : registry.getMeters()) {
      String name = m.getId().getName();
      if (!name.startsWith("headroom.store.") || name.equals("headroom.store.latency")) {
        continue;
      }
      StringBuilder key = new StringBuilder(name);
      List<Tag> tags = m.getId().getTags();
      if (!tags.isEmpty()) {
        key.append('{');
        for (int i = 0; i < tags.size(); i++) {
          key.append(i == 0 ? "" : ",").append(tags.get(i).getKey()).append('=').append(tags.get(i).getValue());
        }
        key.append('}');
      }
      for (Measurement me : m.measure()) {
        values.put(key.toString(), me.getValue());
        break;
      }
    }
    values.forEach((k, v) -> meters.put(k, v));
    return s;
  }

  private static List<String> policyNames(List<UsageBoard.Sample> samples, Set<String> configured) {
    TreeSet<String> names = new TreeSet<>(configured);
    samples.forEach(s -> names.addAll(s.decisions().keySet()));
    return List.copyOf(names);
  }

  private static List<String> outcomes(List<UsageBoard.Sample> samples, String policy) {
    TreeSet<String> names = new TreeSet<>(List.of("allowed", "refused"));
    samples.forEach(s -> names.addAll(s.decisions().getOrDefault(policy, Map.of()).keySet()));
    return List.copyOf(names);
  }
}
