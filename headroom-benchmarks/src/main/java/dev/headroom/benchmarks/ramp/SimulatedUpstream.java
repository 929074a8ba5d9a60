package dev.headroom.benchmarks.ramp;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * An upstream of known capacity whose latency grows with concurrency: {@code slots} requests are
 * served at once, each for {@code service}; the rest wait in one first-come-first-served queue
 * with no bound, as a server's accept queue and worker pool do. Its capacity is
 * {@code slots / service} requests a second (20 slots of 100 ms: 200 a second); below it a
 * request takes {@code service}, above it the queue grows and every request waits behind it, so
 * an unlimited client at three times the capacity sees latencies grow until its timeouts.
 *
 * <p>The capacity can be changed while it runs ({@code GET /admin/slots?n=10}, or
 * {@link #slots(int)}): requests in service finish, and no new one starts until fewer than the new
 * number are in service. {@code GET /admin/stats} answers the slots, the requests in service and
 * waiting, and the requests served. Every other request is served: {@code 200} with a short
 * body, after its wait and its service.
 *
 * <p>State, all on one event loop (so no lock): the slots, the requests in service, the queue of
 * waiting requests (their channels; a request whose client went away while it waited is skipped
 * when its turn comes, as a server that notices the closed connection would), and the count served.
 * A completion is a task scheduled on that loop {@code service} after the request started.
 * Thread-safe: every public method hands its work to the loop.
 *
 * <p>Usage: {@code java -cp benchmarks.jar dev.headroom.benchmarks.ramp.SimulatedUpstream PORT SLOTS
 * SERVICE_MS}; prints {@code listening on PORT} and serves until killed.
 */
public final class SimulatedUpstream implements AutoCloseable {

  private static final byte[] BODY = "{\"message\":\"served\"}".getBytes(StandardCharsets.US_ASCII);

  private final EventLoopGroup group = new NioEventLoopGroup(1);
  private final EventLoop loop = group.next();
  private final long serviceNanos;
  private final Channel server;
  private final ArrayDeque<Waiting> queue = new ArrayDeque<>();
  private int slots;
  private int busy;
  private long served;

  private record Waiting(ChannelHandlerContext ctx, boolean keepAlive) {}

  private SimulatedUpstream(int port, int slots, Duration service) throws InterruptedException {
    if (slots < 1) {
      throw new IllegalArgumentException("slots: " + slots + " is not a capacity; expected at least 1");
    }
    if (service.isNegative() || service.isZero()) {
      throw new IllegalArgumentException("service: " + service + " is not a service time; expected a positive duration");
    }
    this.slots = slots;
    this.serviceNanos = service.toNanos();
    this.server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
        .option(ChannelOption.SO_BACKLOG, 4096)
        .childHandler(new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel ch) {
            ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(64 * 1024), new Handler());
          }
        }).bind(new InetSocketAddress("127.0.0.1", port)).sync().channel();
  }

  /**
   * Starts an upstream on loopback.
   *
   * @param port the port, 0 for any free one
   * @param slots how many requests are served at once, at least 1
   * @param service how long each takes once started
   */
  public static SimulatedUpstream start(int port, int slots, Duration service) throws InterruptedException {
    return new SimulatedUpstream(port, slots, service);
  }

  /** The port it listens on. */
  public int port() {
    return ((InetSocketAddress) server.localAddress()).getPort();
  }

  /** Sets how many requests are served at once from now on. */
  public void slots(int n) {
    if (n < 1) {
      throw new IllegalArgumentException("slots: " + n + " is not a capacity; expected at least 1");
    }
    loop.execute(() -> {
      slots = n;
      startWaiting();
    });
  }

  private void arrived(ChannelHandlerContext ctx, FullHttpRequest request) {
    boolean keepAlive = HttpUtil.isKeepAlive(request);
    QueryStringDecoder uri = new QueryStringDecoder(request.uri());
    if (uri.path().equals("/admin/slots")) {
      List<String> n = uri.parameters().get("n");
      try {
        slots(Integer.parseInt(n == null ? "" : n.get(0)));
        respond(ctx, keepAlive, HttpResponseStatus.OK, ("slots " + n.get(0) + "\n").getBytes(StandardCharsets.US_ASCII));
      } catch (IllegalArgumentException e) {
        respond(ctx, keepAlive, HttpResponseStatus.BAD_REQUEST, (e.getMessage() + "\n").getBytes(StandardCharsets.US_ASCII));
      }
      return;
    }
    if (uri.path().equals("/admin/stats")) {
      String stats = "slots " + slots + " busy " + busy + " waiting " + queue.size() + " served " + served + "\n";
      respond(ctx, keepAlive, HttpResponseStatus.OK, stats.getBytes(StandardCharsets.US_ASCII));
      return;
    }
    queue.addLast(new Waiting(ctx, keepAlive));
    startWaiting();
  }

  /** Starts waiting requests while a slot is free. On the loop. */
  private void startWaiting() {
    while (busy < slots && !queue.isEmpty()) {
      Waiting w = queue.pollFirst();
      if (!w.ctx.channel().isActive()) {
        continue;
      }
      busy++;
      loop.schedule(() -> finished(w), serviceNanos, TimeUnit.NANOSECONDS);
    }
  }

  private void finished(Waiting w) {
    busy--;
    served++;
    respond(w.ctx, w.keepAlive, HttpResponseStatus.OK, BODY);
    startWaiting();
  }

  private static void respond(ChannelHandlerContext ctx, boolean keepAlive, HttpResponseStatus status, byte[] body) {
    FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.wrappedBuffer(body));
    response.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
        .setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
    if (!keepAlive) {
      response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
    }
    var written = ctx.writeAndFlush(response);
    if (!keepAlive) {
      written.addListener(ChannelFutureListener.CLOSE);
    }
  }

  /** One connection's requests, handed to the upstream's queue. On the loop. */
  private final class Handler extends SimpleChannelInboundHandler<FullHttpRequest> {
    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
      arrived(ctx, request);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close(); // a reset by a client that gave up: its waiting request is skipped
    }
  }

  @Override
  public void close() {
    server.close().syncUninterruptibly();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  public static void main(String[] args) throws InterruptedException {
    if (args.length != 3) {
      System.err.println("usage: SimulatedUpstream PORT SLOTS SERVICE_MS");
      System.exit(2);
    }
    SimulatedUpstream upstream = start(Integer.parseInt(args[0]), Integer.parseInt(args[1]),
        Duration.ofMillis(Long.parseLong(args[2])));
    System.out.println("listening on " + upstream.port());
    System.out.flush();
    new CountDownLatch(1).await(); // until killed
  }
}
