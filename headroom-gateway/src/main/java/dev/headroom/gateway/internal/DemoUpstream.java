package dev.headroom.gateway.internal;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerKeepAliveHandler;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

/**
 * The built-in demo upstream that {@code headroom serve} starts on a loopback port when the
 * configuration asks for it ({@code upstreams.NAME.demo: true}): answers every request with a
 * small JSON document naming the method and path, so that the gateway can be tried without a
 * service of one's own. Not meant to serve real traffic.
 *
 * <p>Two paths exist so that the sample configuration's guidance leads somewhere (Graceful
 * Boundaries CONFORMANCE level 3, "guidance MUST be honest"): under {@value #CACHED_PREFIX} the
 * same answer as a cached copy (marked {@code "cached": true}, cacheable for a minute), the
 * alternative the burst and in-flight policies offer; at {@value #PRICING} the demo's plans, where
 * the daily quota's {@code upgradeUrl} points.
 */
final class DemoUpstream implements AutoCloseable {
  /** Paths under this answer as cached copies. */
  static final String CACHED_PREFIX = "/cached/";

  /** The path of the demo's plans. */
  static final String PRICING = "/pricing";

  /** The plans document: the demo is free; a real service says here how to get more capacity. */
  static final String PLANS = "{\"plans\":[{\"name\":\"free\",\"price\":\"0\","
      + "\"limits\":\"the limits at /docs/limits and /.well-known/limits\"}],"
      + "\"detail\":\"The Headroom demo has one plan, free. A service behind Headroom lists its paid plans here.\"}\n";
  private final Channel channel;

  private DemoUpstream(Channel channel) {
    this.channel = channel;
  }

  static DemoUpstream start(EventLoopGroup group, Class<? extends ServerChannel> channelClass)
      throws InterruptedException {
    ServerBootstrap b = new ServerBootstrap().group(group).channel(channelClass)
        .childHandler(new ChannelInitializer<Channel>() {
          @Override
          protected void initChannel(Channel ch) {
            ch.pipeline().addLast(new HttpServerCodec(), new HttpServerKeepAliveHandler(),
                new HttpObjectAggregator(1 << 20), new Handler());
          }
        });
    return new DemoUpstream(b.bind("127.0.0.1", 0).sync().channel());
  }

  int port() {
    return ((InetSocketAddress) channel.localAddress()).getPort();
  }

  @Override
  public void close() {
    channel.close().syncUninterruptibly();
  }

  private static final class Handler extends SimpleChannelInboundHandler<FullHttpRequest> {
    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
      String path = req.uri().indexOf('?') < 0 ? req.uri() : req.uri().substring(0, req.uri().indexOf('?'));
      boolean cached = path.startsWith(CACHED_PREFIX);
      String body = path.equals(PRICING) ? PLANS
          : "{\"message\":\"Hello from the Headroom demo upstream\",\"method\":\"" + req.method().name()
              + "\",\"path\":\"" + jsonEscape(req.uri()) + "\",\"receivedBytes\":" + req.content().readableBytes()
              + (cached ? ",\"cached\":true" : "") + "}\n";
      FullHttpResponse resp = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
          Unpooled.copiedBuffer(body, StandardCharsets.UTF_8));
      resp.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/json");
      if (cached) {
        resp.headers().set(HttpHeaderNames.CACHE_CONTROL, "public, max-age=60");
      }
      resp.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, resp.content().readableBytes());
      HttpUtil.setKeepAlive(resp, HttpUtil.isKeepAlive(req));
      ctx.writeAndFlush(resp).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
    }

    private static String jsonEscape(String s) {
      StringBuilder sb = new StringBuilder();
      for (char c : s.toCharArray()) {
        if (c == '"' || c == '\\') {
          sb.append('\\').append(c);
        } else if (c < 0x20) {
          sb.append(String.format("\\u%04x", (int) c));
        } else {
          sb.append(c);
        }
      }
      return sb.toString();
    }
  }
}
