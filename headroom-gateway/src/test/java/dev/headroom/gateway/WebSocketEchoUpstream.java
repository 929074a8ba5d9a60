package dev.headroom.gateway;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import java.net.InetSocketAddress;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A WebSocket echo server for the gateway's tunnel tests, on Netty's own WebSocket server
 * (RFC 6455): a handshake at {@code /ws...} is accepted and every data frame is echoed back as it
 * came; any other request is answered {@code 400} with the body {@code "refused by upstream"}.
 * The heads of the handshakes it received are kept, and the connections it has open counted.
 */
final class WebSocketEchoUpstream implements AutoCloseable {
  /** Largest frame the echo accepts: room for the several-megabyte messages of the tests. */
  static final int MAX_FRAME = 32 << 20;
  static final String REFUSED = "refused by upstream";

  private final NioEventLoopGroup group = new NioEventLoopGroup(1);
  private final Channel server;
  private final BlockingQueue<HttpHeaders> handshakes = new LinkedBlockingQueue<>();
  private final AtomicInteger open = new AtomicInteger();

  WebSocketEchoUpstream() throws InterruptedException {
    WebSocketServerProtocolConfig ws = WebSocketServerProtocolConfig.newBuilder()
        .websocketPath("/ws").checkStartsWith(true).maxFramePayloadLength(MAX_FRAME).build();
    server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
        .childHandler(new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel ch) {
            open.incrementAndGet();
            ch.closeFuture().addListener(f -> open.decrementAndGet());
            ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(1 << 16), new Recorder(),
                new WebSocketServerProtocolHandler(ws), new Echo());
          }
        }).bind("127.0.0.1", 0).sync().channel();
  }

  int port() {
    return ((InetSocketAddress) server.localAddress()).getPort();
  }

  /** The next handshake's request fields as they arrived, in order. */
  HttpHeaders takeHandshake() throws InterruptedException {
    return handshakes.take();
  }

  /** Connections the echo has open now. */
  int openConnections() {
    return open.get();
  }

  /** Keeps the head of each WebSocket handshake, and answers every other request 400. */
  private final class Recorder extends SimpleChannelInboundHandler<FullHttpRequest> {
    Recorder() {
      super(false);
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
      if (req.uri().startsWith("/ws")) {
        handshakes.add(req.headers().copy());
        ctx.fireChannelRead(req);
        return;
      }
      req.release();
      DefaultFullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.BAD_REQUEST,
          Unpooled.copiedBuffer(REFUSED, UTF_8));
      r.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain").setInt(HttpHeaderNames.CONTENT_LENGTH, REFUSED.length());
      ctx.writeAndFlush(r).addListener(ChannelFutureListener.CLOSE);
    }
  }

  /** Echoes text, binary and continuation frames (the protocol handler answers pings and closes). */
  private static final class Echo extends SimpleChannelInboundHandler<WebSocketFrame> {
    Echo() {
      super(false);
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, WebSocketFrame frame) {
      ctx.writeAndFlush(frame);
    }
  }

  @Override
  public void close() {
    server.close().syncUninterruptibly();
    group.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
  }
}
