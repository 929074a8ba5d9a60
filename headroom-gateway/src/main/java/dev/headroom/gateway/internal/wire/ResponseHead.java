package dev.headroom.gateway.internal.wire;

import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The head of one upstream response as {@link UpstreamResponseDecoder} read it: the status, how
 * the body is framed, whether the connection stays open, and the header fields as offsets into a
 * copy of the head's bytes, so that forwarding them is a copy of byte ranges, not a parse into
 * strings and a re-encoding. A head that could not be read carries a {@link #failure()}.
 *
 * <p>Immutable once built; confined to the upstream channel's event loop.
 */
public final class ResponseHead {
  /** How the body that follows is delimited (RFC 9112 section 6.3). */
  public enum Framing {
    /** No body: a HEAD request's response, 1xx, 204, 304, or Content-Length 0. */
    NONE,
    /** Content-Length bytes. */
    FIXED,
    /** Chunked transfer coding, the final coding of Transfer-Encoding. */
    CHUNKED,
    /** Until the upstream closes the connection. */
    UNTIL_CLOSE
  }

  public static final byte[] CONTENT_LENGTH = bytes("content-length")[0];
  public static final byte[] TRANSFER_ENCODING = bytes("transfer-encoding")[0];

  private final int status;
  private final boolean http10;
  private final boolean keepAlive;
  private final Framing framing;
  private final long contentLength;
  private final byte[] raw;
  private final int reasonStart;
  private final int reasonEnd;
  /** Four offsets per field into {@link #raw}: name start, name end, value start, value end. */
  private final int[] fields;
  private final int count;
  /** Per field: removed when forwarding (hop-by-hop, or named by Connection). */
  private final boolean[] hop;
  private final String failure;

  public ResponseHead(int status, boolean http10, boolean keepAlive, Framing framing, long contentLength, byte[] raw,
      int reasonStart, int reasonEnd, int[] fields, int count, boolean[] hop) {
    this.status = status;
    this.http10 = http10;
    this.keepAlive = keepAlive;
    this.framing = framing;
    this.contentLength = contentLength;
    this.raw = raw;
    this.reasonStart = reasonStart;
    this.reasonEnd = reasonEnd;
    this.fields = fields;
    this.count = count;
    this.hop = hop;
    this.failure = null;
  }

  private ResponseHead(String failure) {
    this.status = 0;
    this.http10 = false;
    this.keepAlive = false;
    this.framing = Framing.NONE;
    this.contentLength = -1;
    this.raw = new byte[0];
    this.reasonStart = 0;
    this.reasonEnd = 0;
    this.fields = new int[0];
    this.count = 0;
    this.hop = new boolean[0];
    this.failure = failure;
  }

  /** A response that is not valid HTTP/1.1: the connection cannot be used any more. */
  public static ResponseHead failed(String why) {
    return new ResponseHead(why);
  }

  /** Why the response could not be read, or null. */
  public String failure() {
    return failure;
  }

  public int status() {
    return status;
  }

  public boolean http10() {
    return http10;
  }

  /** Whether the upstream keeps the connection open after this response. */
  public boolean keepAlive() {
    return keepAlive;
  }

  public Framing framing() {
    return framing;
  }

  /** The Content-Length, or -1 when the body is not delimited by one. */
  public long contentLength() {
    return contentLength;
  }

  /** The reason phrase as sent (ISO-8859-1), possibly empty. */
  public String reason() {
    return new String(raw, reasonStart, reasonEnd - reasonStart, StandardCharsets.ISO_8859_1);
  }

  public int size() {
    return count;
  }

  /** Whether field {@code i} is removed when forwarding: hop-by-hop, or listed in Connection. */
  public boolean hopByHop(int i) {
    return hop[i];
  }

  /** Whether field {@code i}'s name equals {@code lower} (lower-case ASCII), ignoring case. */
  public boolean nameIs(int i, byte[] lower) {
    return equalsLower(raw, fields[4 * i], fields[4 * i + 1], lower);
  }

  public String name(int i) {
    return new String(raw, fields[4 * i], fields[4 * i + 1] - fields[4 * i], StandardCharsets.ISO_8859_1);
  }

  public String value(int i) {
    return new String(raw, fields[4 * i + 2], fields[4 * i + 3] - fields[4 * i + 2], StandardCharsets.ISO_8859_1);
  }

  /** The bytes of field {@code i} from the start of its name to the end of its value, as received. */
  public int lineStart(int i) {
    return fields[4 * i];
  }

  public int lineEnd(int i) {
    return fields[4 * i + 3];
  }

  /** Where field {@code i}'s name ends in {@link #raw()} (its value ends at {@link #lineEnd}). */
  public int nameEnd(int i) {
    return fields[4 * i + 1];
  }

  /** Where field {@code i}'s value starts in {@link #raw()}. */
  public int valueStart(int i) {
    return fields[4 * i + 2];
  }

  public byte[] raw() {
    return raw;
  }

  public int reasonStart() {
    return reasonStart;
  }

  public int reasonEnd() {
    return reasonEnd;
  }

  /** The first value of the named field (any case), or null. */
  public String get(String name) {
    byte[] lower = name.toLowerCase(Locale.ROOT).getBytes(StandardCharsets.ISO_8859_1);
    for (int i = 0; i < count; i++) {
      if (nameIs(i, lower)) {
        return value(i);
      }
    }
    return null;
  }

  /**
   * The response as a Netty message, for the paths that rewrite it (normalised errors, vend
   * extension data): every field as received, hop-by-hop ones included, so that those paths apply
   * the same rules as before.
   */
  public HttpResponse toHttpResponse() {
    HttpHeaders h = DefaultHttpHeadersFactory.headersFactory().withValidation(false).newHeaders();
    for (int i = 0; i < count; i++) {
      h.add(name(i), value(i));
    }
    return new DefaultHttpResponse(http10 ? HttpVersion.HTTP_1_0 : HttpVersion.HTTP_1_1,
        new HttpResponseStatus(status, reason()), h);
  }

  /** The fields, for diagnostics and tests: name, value pairs in order. */
  public List<String[]> fieldList() {
    List<String[]> l = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      l.add(new String[] {name(i), value(i)});
    }
    return l;
  }

  /** Whether two ranges of {@code raw} hold the same ASCII text, ignoring case. */
  public static boolean equalsIgnoreCase(byte[] raw, int s1, int e1, int s2, int e2) {
    if (e1 - s1 != e2 - s2) {
      return false;
    }
    for (int i = 0; i < e1 - s1; i++) {
      if (lower(raw[s1 + i]) != lower(raw[s2 + i])) {
        return false;
      }
    }
    return true;
  }

  private static int lower(byte b) {
    return b >= 'A' && b <= 'Z' ? b + ('a' - 'A') : b;
  }

  public static boolean equalsLower(byte[] raw, int start, int end, byte[] lower) {
    if (end - start != lower.length) {
      return false;
    }
    for (int i = 0; i < lower.length; i++) {
      if (lower(raw[start + i]) != lower[i]) {
        return false;
      }
    }
    return true;
  }

  private static byte[][] bytes(String... names) {
    byte[][] b = new byte[names.length][];
    for (int i = 0; i < names.length; i++) {
      b[i] = names[i].getBytes(StandardCharsets.US_ASCII);
    }
    return b;
  }

  @Override
  public String toString() {
    return failure != null ? "ResponseHead[failed: " + failure + "]"
        : "ResponseHead[" + status + " " + framing + (framing == Framing.FIXED ? " " + contentLength : "")
            + (keepAlive ? "" : " close") + "]";
  }
}
