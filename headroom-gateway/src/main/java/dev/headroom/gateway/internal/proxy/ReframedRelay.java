package dev.headroom.gateway.internal.proxy;

import dev.headroom.gateway.internal.wire.HopByHop;
import dev.headroom.gateway.internal.wire.ResponseBody;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import java.util.ArrayList;
import java.util.List;

/**
 * The re-framed path: a response the HTTP encoder re-frames, because its framing cannot be
 * forwarded as it came: a body that runs until the upstream closes (chunked for an HTTP/1.1
 * client), or a chunked one for an HTTP/1.0 client (whose body then ends with the connection,
 * RFC 9112 section 6.1). The decoder removes the chunk framing; the head is the upstream's minus
 * hop-by-hop fields ({@link HopByHop}), kept back until the body's first piece as the raw head is,
 * so that a body broken from its start can still be answered with 502.
 */
final class ReframedRelay implements ResponseRelay {
  private final ClientSink client;
  private final ChannelHandlerContext out;
  /** The re-encoded head not yet written. */
  private HttpResponse pendingResponse;

  /** A relay for the body after {@code head}; null when the head went out already. */
  ReframedRelay(ClientSink client, HttpResponse head) {
    this.client = client;
    this.out = client.messagesOut();
    this.pendingResponse = head;
  }

  /**
   * The client's response head from the upstream's, edited in place: hop-by-hop fields out, the
   * framing the encoder will give it, the route's RateLimit fields, the connection's fate.
   */
  static HttpResponse clientResponse(ClientSink client, HttpResponse r) {
    HttpHeaders h = r.headers(); // the upstream's response is ours: edited in place, not copied
    boolean chunked = HttpUtil.isTransferEncodingChunked(r);
    String codings = codingsBeforeChunked(h);
    if (h.contains(HttpHeaderNames.TRANSFER_ENCODING)) {
      // not the body's length: the decoder framed it by Transfer-Encoding (RFC 9112 section 6.3, item 3)
      h.remove(HttpHeaderNames.CONTENT_LENGTH);
    }
    HopByHop.strip(h);
    int code = r.status().code();
    boolean bodyless = client.headRequest() || code == 204 || code == 304;
    if (!bodyless && (chunked || !h.contains(HttpHeaderNames.CONTENT_LENGTH))) {
      if (client.http10()) {
        client.closeAfter(); // HTTP/1.0 has no chunking: the body ends with the connection
      } else {
        // codings such as gzip stay on the data, so the client is told of them before chunked
        h.set(HttpHeaderNames.TRANSFER_ENCODING, codings == null ? HttpHeaderValues.CHUNKED : codings + ", chunked");
      }
    }
    client.writeFields(code, h::add);
    if (!client.keepAlive()) {
      h.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
    } else if (client.http10()) {
      h.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
    }
    r.setProtocolVersion(HttpVersion.HTTP_1_1);
    return r;
  }

  /**
   * The transfer codings of a response other than a final chunked (RFC 9112 section 6.1), which
   * are still applied to its data when the chunked framing is removed; null when there are none.
   */
  static String codingsBeforeChunked(HttpHeaders h) {
    List<String> codings = new ArrayList<>();
    for (String v : h.getAll(HttpHeaderNames.TRANSFER_ENCODING)) {
      for (String coding : v.split(",")) {
        if (!coding.isBlank()) {
          codings.add(coding.strip());
        }
      }
    }
    if (!codings.isEmpty() && codings.get(codings.size() - 1).equalsIgnoreCase("chunked")) {
      codings.remove(codings.size() - 1);
    }
    return codings.isEmpty() ? null : String.join(", ", codings);
  }

  @Override
  public void body(ResponseBody piece) {
    content(piece.last() ? new DefaultLastHttpContent(piece.bytes()) : new DefaultHttpContent(piece.bytes()));
  }

  void content(HttpContent c) {
    readComplete();
    client.sent(c.content().readableBytes());
    if (c instanceof LastHttpContent) {
      client.lastWrite();
      client.whenWritten(out.writeAndFlush(c));
    } else {
      out.write(c);
      client.deferFlush();
      client.pullUpstream();
    }
  }

  @Override
  public void readComplete() {
    if (pendingResponse != null) {
      HttpResponse r = pendingResponse;
      pendingResponse = null;
      out.write(r);
    }
  }

  @Override
  public boolean nothingSent() {
    return pendingResponse != null;
  }

  @Override
  public void release() {
    pendingResponse = null;
  }
}
