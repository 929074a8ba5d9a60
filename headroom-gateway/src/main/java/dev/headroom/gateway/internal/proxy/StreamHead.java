package dev.headroom.gateway.internal.proxy;

import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.HttpConversionUtil;
import io.netty.util.AsciiString;
import java.util.Set;

/**
 * A response head as an HTTP/2 stream's HEADERS frame carries it (RFC 9113 section 8.3.2):
 * {@code :status} and the fields, their names in lower case (section 8.2.1), for the responses an
 * HTTP/2 stream is sent as frames directly ({@link StreamRelay}, {@link LocalResponse#writeFrames}).
 * The result is the one the stream's adapter gave when it parsed the same response from HTTP/1.1
 * bytes, through Netty's {@link HttpConversionUtil#toHttp2Headers(HttpHeaders, Http2Headers)}: the
 * names that conversion treats apart (the connection-specific fields of section 8.2.2, which the
 * callers leave out already through {@code HopByHop}; {@code Host}; {@code TE}; {@code Cookie}, split
 * into crumbs; Netty's own extension names) still go through it, every other field is added as it is.
 *
 * <p>Stateless; thread-safe.
 */
final class StreamHead {
  /** The names Netty's conversion drops, filters or splits, lower case. */
  private static final Set<AsciiString> APART = Set.of(HttpHeaderNames.CONNECTION, HttpHeaderNames.KEEP_ALIVE,
      HttpHeaderNames.PROXY_CONNECTION, HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderNames.HOST,
      HttpHeaderNames.UPGRADE, HttpHeaderNames.TE, HttpHeaderNames.COOKIE,
      HttpConversionUtil.ExtensionHeaderNames.STREAM_ID.text(), HttpConversionUtil.ExtensionHeaderNames.SCHEME.text(),
      HttpConversionUtil.ExtensionHeaderNames.PATH.text(),
      HttpConversionUtil.ExtensionHeaderNames.STREAM_DEPENDENCY_ID.text(),
      HttpConversionUtil.ExtensionHeaderNames.STREAM_WEIGHT.text(),
      HttpConversionUtil.ExtensionHeaderNames.STREAM_PROMISE_ID.text());

  /**
   * For each name length below 64, the first bytes (modulo 64, one bit each) of the {@link #APART}
   * names of that length: a name whose length and first byte miss is not one of them, without hashing
   * it and probing the set (which was most of this class's time, every response field going through it).
   */
  private static final long[] APART_FIRST_BY_LENGTH = new long[64];

  static {
    for (AsciiString n : APART) {
      APART_FIRST_BY_LENGTH[n.length()] |= 1L << (n.byteAt(0) & 63);
    }
  }

  private StreamHead() {}

  /** An empty head of {@code status}, with room for {@code fields} fields. */
  static Http2Headers of(int status, int fields) {
    Http2Headers h = new DefaultHttp2Headers(false, fields + 2);
    h.status(HttpResponseStatus.valueOf(status).codeAsText());
    return h;
  }

  /** Adds a field whose name may be in any case. */
  static void add(Http2Headers h, CharSequence name, CharSequence value) {
    addLower(h, AsciiString.of(name).toLowerCase(), value);
  }

  /** Adds the field whose name is {@code raw[nameStart, nameEnd)} and value {@code raw[valueStart, valueEnd)}, as received. */
  static void add(Http2Headers h, byte[] raw, int nameStart, int nameEnd, int valueStart, int valueEnd) {
    addLower(h, new AsciiString(raw, nameStart, nameEnd - nameStart, true).toLowerCase(),
        new AsciiString(raw, valueStart, valueEnd - valueStart, true));
  }

  private static boolean mayBeApart(AsciiString lower) {
    int n = lower.length();
    return n > 0 && n < 64 && (APART_FIRST_BY_LENGTH[n] >>> (lower.byteAt(0) & 63) & 1) != 0;
  }

  private static void addLower(Http2Headers h, AsciiString name, CharSequence value) {
    if (mayBeApart(name) && APART.contains(name)) {
      HttpHeaders one = DefaultHttpHeadersFactory.headersFactory().withValidation(false).newHeaders();
      one.add(name, value);
      HttpConversionUtil.toHttp2Headers(one, h);
    } else {
      h.add(name, value);
    }
  }
}
