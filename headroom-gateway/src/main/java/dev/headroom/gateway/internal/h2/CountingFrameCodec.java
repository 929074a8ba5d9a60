package dev.headroom.gateway.internal.h2;

import dev.headroom.gateway.internal.admin.GatewayMetrics;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http2.DefaultHttp2Connection;
import io.netty.handler.codec.http2.DefaultHttp2RemoteFlowController;
import io.netty.handler.codec.http2.Http2Connection;
import io.netty.handler.codec.http2.Http2ConnectionDecoder;
import io.netty.handler.codec.http2.Http2ConnectionEncoder;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Exception;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2Stream;
import io.netty.handler.codec.http2.UniformStreamByteDistributor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Netty's {@link Http2FrameCodec}, counting the connection errors it ends connections with (GOAWAY
 * and the reason, RFC 9113 section 5.4.1) in {@code headroom_http2_refused_total{kind}}: a header list
 * past {@code SETTINGS_MAX_HEADER_LIST_SIZE} (an HPACK bomb, whose decoding Netty stops at the bound),
 * a header block that does not decompress, and any other protocol error; and the header lists past the
 * bound that Netty answers with 431 on their stream ({@link #handleServerHeaderDecodeSizeError}). The bounds the
 * {@link ConnectionGuard} breaks are counted there, not twice here.
 *
 * <p>Thread-safety: Netty's; confined to the connection's event loop.
 */
final class CountingFrameCodec extends Http2FrameCodec {
  private static final Logger LOG = LoggerFactory.getLogger(CountingFrameCodec.class);
  private final GatewayMetrics metrics;
  /** The header list bound announced, for the GOAWAY's reason. */
  private final Long maxHeaderListSize;

  private CountingFrameCodec(Http2ConnectionEncoder encoder, Http2ConnectionDecoder decoder, Http2Settings settings,
      boolean decoupleCloseAndGoAway, boolean flushPreface, GatewayMetrics metrics) {
    super(encoder, decoder, settings, decoupleCloseAndGoAway, flushPreface);
    this.metrics = metrics;
    this.maxHeaderListSize = settings.maxHeaderListSize();
  }

  @Override
  protected void onConnectionError(ChannelHandlerContext ctx, boolean outbound, Throwable cause, Http2Exception error) {
    // error is null when the cause is no HTTP/2 error (a write failing because the client went away)
    if (error != null && !outbound && !(error instanceof ConnectionGuard.Breach)) {
      metrics.http2Refused(kind(error));
    }
    LOG.debug("HTTP/2 connection {} ends: {}", ctx.channel(), error != null ? error.error() + " " + error.getMessage() : cause);
    super.onConnectionError(ctx, outbound, cause, error);
  }

  /**
   * A request's header list decoded past {@code SETTINGS_MAX_HEADER_LIST_SIZE} (an HPACK bomb: a small
   * block whose entries, referenced again and again, decode to megabytes; Netty stops adding at the
   * bound, so memory stays bounded): the stream is answered 431 (RFC 6585 section 5) and the connection
   * ends with GOAWAY, as an HTTP/1.1 connection closes after its 431.
   */
  @Override
  protected void handleServerHeaderDecodeSizeError(ChannelHandlerContext ctx, Http2Stream stream) {
    super.handleServerHeaderDecodeSizeError(ctx, stream);
    metrics.http2Refused("header-list-too-large");
    onError(ctx, false, new ConnectionGuard.Breach("header-list-too-large: a header list past "
        + "SETTINGS_MAX_HEADER_LIST_SIZE (" + maxHeaderListSize + " bytes)"));
  }

  /** The kind a connection error is counted as. */
  static String kind(Http2Exception e) {
    String m = String.valueOf(e.getMessage());
    if (m.contains("Header size exceeded") || m.contains("header list") || m.contains("Header List")) {
      return "header-list-too-large";
    }
    if (e.error() == Http2Error.COMPRESSION_ERROR) {
      return "hpack";
    }
    if (e.error() == Http2Error.FLOW_CONTROL_ERROR) {
      return "flow-control";
    }
    return "protocol-error";
  }

  /**
   * Builds the codec with Netty's settings and bounds, as {@link Http2FrameCodecBuilder} would, but for
   * how the connection's send window is shared among its streams: evenly ({@link UniformStreamByteDistributor}),
   * not by the priority tree of RFC 7540 section 5.3, which RFC 9113 section 5.3.2 deprecates and which
   * Netty's default keeps per stream at a cost on every stream's opening, activation and close (of
   * the event loop's samples with 256 streams in flight on 8 connections, 3% of them).
   */
  static final class Builder extends Http2FrameCodecBuilder {
    private final GatewayMetrics metrics;

    Builder(GatewayMetrics metrics) {
      this.metrics = metrics;
      Http2Connection connection = new DefaultHttp2Connection(true); // a server's (Netty then forbids server())
      connection.remote().flowController(
          new DefaultHttp2RemoteFlowController(connection, new UniformStreamByteDistributor(connection)));
      connection(connection);
    }

    @Override
    protected Http2FrameCodec build(Http2ConnectionDecoder decoder, Http2ConnectionEncoder encoder,
        Http2Settings initialSettings) {
      CountingFrameCodec codec = new CountingFrameCodec(encoder, decoder, initialSettings, decoupleCloseAndGoAway(),
          flushPreface(), metrics);
      codec.gracefulShutdownTimeoutMillis(gracefulShutdownTimeoutMillis());
      return codec;
    }
  }
}
