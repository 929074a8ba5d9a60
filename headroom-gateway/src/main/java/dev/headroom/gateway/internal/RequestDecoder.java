package dev.headroom.gateway.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.codec.http.LastHttpContent;
import java.util.List;

/**
 * Netty's request decoder, handing on a request without a body as one message. For such a
 * request (most GETs) the decoder emits the head and then an empty last content; each message
 * costs a pass through the pipeline and the proxy's queue. Here the two become one
 * {@link FullHttpRequest} with no content, sharing the decoded head's fields, so the proxy sees a
 * request that is complete when it starts (it already treats a {@link LastHttpContent} request so).
 * A request with a body, or one the decoder failed, passes as decoded.
 */
final class RequestDecoder extends HttpRequestDecoder {

  RequestDecoder(int maxInitialLineLength, int maxHeaderSize, int maxChunkSize) {
    super(maxInitialLineLength, maxHeaderSize, maxChunkSize);
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf buffer, List<Object> out) throws Exception {
    int before = out.size();
    super.decode(ctx, buffer, out);
    if (out.size() == before + 2
        && out.get(before + 1) == LastHttpContent.EMPTY_LAST_CONTENT
        && out.get(before) instanceof HttpRequest r
        && !(r instanceof FullHttpRequest)
        && r.decoderResult().isSuccess()) {
      DefaultFullHttpRequest full = new DefaultFullHttpRequest(r.protocolVersion(), r.method(), r.uri(),
          Unpooled.EMPTY_BUFFER, r.headers(), EmptyHttpHeaders.INSTANCE);
      full.setDecoderResult(r.decoderResult());
      out.set(before, full);
      out.remove(before + 1);
    }
  }
}
