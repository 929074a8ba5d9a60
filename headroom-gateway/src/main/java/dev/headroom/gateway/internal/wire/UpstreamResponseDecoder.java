package dev.headroom.gateway.internal.wire;

import dev.headroom.gateway.internal.wire.ResponseHead.Framing;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * Reads an upstream connection's HTTP/1.1 responses (RFC 9112) for forwarding with as little work
 * as the rules allow. Emits, per response, one {@link ResponseHead} and then {@link ResponseBody}
 * pieces, the last one flagged; a response that breaks the rules yields a failed head, after which
 * the connection is unusable and everything else it sends is dropped.
 *
 * <p>State: where in the response the bytes are (head, fixed-length body, chunk-size line, chunk
 * data, the CRLF after chunk data, trailer section, body until close, failed, switched to another
 * protocol by a 101 the request asked for), the bytes left in
 * the body or the current chunk, and the trailer bytes seen. The head is scanned for its end once
 * and parsed from one copy of its bytes; body pieces are slices of what arrived, chunk framing
 * included (the client side forwards them as they are) unless {@link #dechunk} asked for the data
 * alone (for the paths that rewrite a body or re-frame it).
 *
 * <p>Why not Netty's {@code HttpClientCodec}: it builds a header map of strings per response and
 * the client side then encodes it again; profiling the forwarding path put that decode and
 * re-encode at about 40% of the gateway's own CPU per request.
 *
 * <p>What is refused (a 502 if nothing was sent to the client yet, else the client connection is
 * cut): a status line that is not HTTP/1.0 or 1.1 with a status from 100 to 599; a head over the
 * size bound; a field line with no colon, an empty or non-token name, whitespace before the colon
 * (RFC 9112 section 5.1), a control character in a value, or obsolete line folding (section 5.2
 * lets a proxy refuse it with 502); differing Content-Length values (section 6.3); an invalid
 * chunk-size line or chunk data longer than its size (section 7.1). Following section 6.3, a
 * Transfer-Encoding whose final coding is not chunked means the body runs until the connection
 * closes, and a Content-Length beside a Transfer-Encoding is ignored and not forwarded.
 *
 * <p>Thread-safety: confined to the upstream channel's event loop.
 */
public final class UpstreamResponseDecoder extends ByteToMessageDecoder {
  private static final int MAX_CHUNK_LINE = 4096;

  private enum State { HEAD, FIXED, CHUNK_SIZE, CHUNK_DATA, CHUNK_END, TRAILERS, UNTIL_CLOSE, FAILED, SWITCHED }

  private final int maxHead;
  private State state = State.HEAD;
  private boolean noBody;
  private boolean dechunk;
  /** Whether the request in flight asked to upgrade the connection, so that a 101 switches it. */
  private boolean upgrade;
  private long remaining;
  private int trailerBytes;

  /** @param maxHead the largest response head accepted, status line and fields, in bytes */
  public UpstreamResponseDecoder(int maxHead) {
    this.maxHead = maxHead;
  }

  /** Whether the request in flight is a HEAD request, whose response has no body. */
  public void expectNoBody(boolean head) {
    this.noBody = head;
  }

  /**
   * Whether the request in flight asked to upgrade the connection (RFC 9110 section 7.8). If so, a
   * 101 (Switching Protocols) ends HTTP on the connection: the decoder hands on the head and
   * decodes nothing after it, leaving the bytes that followed it in its buffer, which Netty passes
   * on to the next handler when this decoder is removed (the tunnel's end). Without an upgrade
   * asked for, a 101 is a failed head (RFC 9110 section 15.2.2: a server switches only when asked).
   */
  public void expectUpgrade(boolean upgrade) {
    this.upgrade = upgrade;
  }

  /** Whether chunked bodies are handed on as data alone (true) or with their framing (false). */
  public void dechunk(boolean data) {
    this.dechunk = data;
  }

  /** Whether the decoder is between responses (nothing of a response read yet). */
  public boolean idle() {
    return state == State.HEAD;
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    switch (state) {
      case HEAD -> head(in, out);
      case FIXED -> fixed(in, out);
      case CHUNK_SIZE, CHUNK_DATA, CHUNK_END, TRAILERS -> chunked(in, out);
      case UNTIL_CLOSE -> {
        int n = in.readableBytes();
        if (n > 0) {
          out.add(new ResponseBody(in.readRetainedSlice(n), n, false));
        }
      }
      case FAILED -> in.skipBytes(in.readableBytes());
      case SWITCHED -> { } // not HTTP any more: left for the tunnel (see expectUpgrade)
      default -> throw new AssertionError(state);
    }
  }

  @Override
  protected void decodeLast(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    if (in.isReadable()) {
      decode(ctx, in, out);
    }
    if (state == State.UNTIL_CLOSE) {
      state = State.HEAD;
      out.add(ResponseBody.end()); // the close is the body's end (RFC 9112 section 6.3, item 8)
    }
    // a fixed or chunked body cut short is no complete response: nothing more is emitted, and
    // the exchange sees the connection close mid-body
  }

  // ---- head ----

  private void head(ByteBuf in, List<Object> out) {
    // empty lines before a status line are skipped, as for a request line (RFC 9112 section 2.2)
    while (in.isReadable()) {
      byte b = in.getByte(in.readerIndex());
      if (b != '\r' && b != '\n') {
        break;
      }
      in.skipBytes(1);
    }
    int start = in.readerIndex();
    int available = in.writerIndex() - start;
    // the head is looked for in a copy of the first bytes (a heap array scans faster than the
    // buffer's indexOf per line), taking more only while no blank line has turned up: a head is
    // usually far shorter than the first read
    byte[] buf = scratch;
    int eoh = -1;
    int copied = 0;
    while (true) {
      int want = Math.min(available, Math.min(maxHead + 2, Math.max(copied * 2, buf.length)));
      if (want > buf.length) {
        buf = Arrays.copyOf(buf, want);
      }
      in.getBytes(start + copied, buf, copied, want - copied);
      eoh = endOfHead(buf, Math.max(0, copied - 2), want, maxHead);
      copied = want;
      if (eoh >= 0 || copied == available || copied >= maxHead + 2) {
        break;
      }
    }
    if (eoh < 0) {
      // the bound is on the status line and fields; the blank line after them (up to 2 bytes)
      // may still be on its way, so the head is only known to be too large 2 bytes past it
      if (available - 2 >= maxHead) {
        fail(in, out, "the response head is larger than " + maxHead + " bytes");
      }
      return;
    }
    byte[] raw = Arrays.copyOf(buf, eoh);
    in.skipBytes(eoh);
    ResponseHead h = parse(raw);
    out.add(h);
    if (h.failure() != null) {
      state = State.FAILED;
      in.skipBytes(in.readableBytes());
      return;
    }
    if (h.status() == 101) {
      state = State.SWITCHED; // asked for (see parse): the connection speaks the new protocol from the next byte
      return;
    }
    if (h.status() < 200) {
      return; // interim response: the final one follows
    }
    switch (h.framing()) {
      case NONE -> out.add(ResponseBody.end());
      case FIXED -> {
        state = State.FIXED;
        remaining = h.contentLength();
      }
      case CHUNKED -> state = State.CHUNK_SIZE;
      case UNTIL_CLOSE -> state = State.UNTIL_CLOSE;
      default -> throw new AssertionError(h.framing());
    }
  }

  /** Scratch for finding a head's end: grown only for heads longer than it, and kept. */
  private byte[] scratch = new byte[1024];

  /**
   * The index just past the blank line ending a head in {@code buf[0, n)}, looking at line ends
   * from {@code from} whose line feed lies before {@code maxHead}; -1 when there is none yet.
   */
  private static int endOfHead(byte[] buf, int from, int n, int maxHead) {
    int limit = Math.min(n, maxHead);
    for (int i = from; i < limit; i++) {
      if (buf[i] != '\n') {
        continue;
      }
      if (i + 1 < n && buf[i + 1] == '\n') {
        return i + 2;
      }
      if (i + 2 < n && buf[i + 1] == '\r' && buf[i + 2] == '\n') {
        return i + 3;
      }
    }
    return -1;
  }

  private ResponseHead parse(byte[] raw) {
    int n = raw.length;
    int eol = indexOf(raw, 0, (byte) '\n');
    int lineEnd = eol > 0 && raw[eol - 1] == '\r' ? eol - 1 : eol;
    int statusEnd = lineEnd;
    // status-line = HTTP-version SP status-code SP [ reason-phrase ] (RFC 9112 section 4)
    if (lineEnd < 12 || !startsWith(raw, "HTTP/1.") || (raw[7] != '0' && raw[7] != '1') || raw[8] != ' '
        || !digit(raw[9]) || !digit(raw[10]) || !digit(raw[11]) || (lineEnd > 12 && raw[12] != ' ')) {
      return ResponseHead.failed("the status line is not HTTP/1.1: \"" + printable(raw, 0, Math.min(lineEnd, 64)) + "\"");
    }
    boolean http10 = raw[7] == '0';
    int status = (raw[9] - '0') * 100 + (raw[10] - '0') * 10 + (raw[11] - '0');
    if (status < 100 || status > 599) {
      return ResponseHead.failed("the status code " + status + " is not from 100 to 599");
    }
    if (status == 101 && !upgrade) {
      // the gateway asks for an upgrade only on a route that allows it (expectUpgrade), so no
      // switch was asked for (RFC 9110 section 15.2.2); what would follow is not HTTP/1.1
      return ResponseHead.failed("the upstream switched protocols (101) without being asked to");
    }
    int reasonStart = Math.min(13, lineEnd);
    for (int i = reasonStart; i < lineEnd; i++) {
      if (ctl(raw[i])) {
        return ResponseHead.failed("the reason phrase has a control character");
      }
    }
    int[] fields = new int[32];
    int count = 0;
    int pos = eol + 1;
    int te = -1; // index of the last Transfer-Encoding field
    boolean anyTe = false;
    boolean chunked = false;
    long contentLength = -1;
    boolean close = false;
    boolean keepAliveToken = false;
    int connections = 0;
    boolean namesListed = false;
    while (pos < n) {
      eol = indexOf(raw, pos, (byte) '\n');
      lineEnd = eol > pos && raw[eol - 1] == '\r' ? eol - 1 : eol;
      if (lineEnd == pos) {
        break; // the blank line ending the head
      }
      if (raw[pos] == ' ' || raw[pos] == '\t') {
        return ResponseHead.failed("a field line uses obsolete line folding");
      }
      int colon = -1;
      for (int i = pos; i < lineEnd; i++) {
        if (raw[i] == ':') {
          colon = i;
          break;
        }
        if ((raw[i] == ' ' || raw[i] == '\t') && i > pos) {
          int j = i;
          while (j < lineEnd && (raw[j] == ' ' || raw[j] == '\t')) {
            j++;
          }
          if (j < lineEnd && raw[j] == ':') {
            return ResponseHead.failed("whitespace between the field name " + printable(raw, pos, i)
                + " and its colon (RFC 9112 section 5.1)");
          }
          return ResponseHead.failed("a field line has no colon after its name " + printable(raw, pos, i));
        }
        if (!tchar(raw[i])) {
          return ResponseHead.failed("a field name has the character 0x" + Integer.toHexString(raw[i] & 0xff)
              + ", which is not a token character");
        }
      }
      if (colon <= pos) {
        return ResponseHead.failed(colon < 0 ? "a field line has no colon" : "a field line has an empty name");
      }
      int vs = colon + 1;
      while (vs < lineEnd && (raw[vs] == ' ' || raw[vs] == '\t')) {
        vs++;
      }
      int ve = lineEnd;
      while (ve > vs && (raw[ve - 1] == ' ' || raw[ve - 1] == '\t')) {
        ve--;
      }
      for (int i = vs; i < ve; i++) {
        if (ctl(raw[i])) {
          return ResponseHead.failed("the value of " + printable(raw, pos, colon) + " has a control character");
        }
      }
      if (count * 4 + 4 > fields.length) {
        fields = Arrays.copyOf(fields, fields.length * 2);
      }
      fields[count * 4] = pos;
      fields[count * 4 + 1] = colon;
      fields[count * 4 + 2] = vs;
      fields[count * 4 + 3] = ve;
      if (ResponseHead.equalsLower(raw, pos, colon, ResponseHead.CONTENT_LENGTH)) {
        long cl = contentLength(raw, vs, ve);
        if (cl < 0) {
          return ResponseHead.failed("Content-Length \"" + printable(raw, vs, ve) + "\" is not one non-negative integer");
        }
        if (contentLength >= 0 && cl != contentLength) {
          return ResponseHead.failed("Content-Length " + cl + " differs from an earlier Content-Length " + contentLength);
        }
        contentLength = cl;
      } else if (ResponseHead.equalsLower(raw, pos, colon, ResponseHead.TRANSFER_ENCODING)) {
        anyTe = true;
        if (ve > vs) {
          te = count;
          chunked = lastTokenIsChunked(raw, vs, ve);
        }
      } else if (ResponseHead.equalsLower(raw, pos, colon, CONNECTION)) {
        connections++;
        // the usual values need no list parsing
        if (ResponseHead.equalsLower(raw, vs, ve, KEEP_ALIVE)) {
          keepAliveToken = true;
          count++;
          pos = eol + 1;
          continue;
        }
        if (ResponseHead.equalsLower(raw, vs, ve, CLOSE)) {
          close = true;
          count++;
          pos = eol + 1;
          continue;
        }
        int[] tokens = tokens(raw, vs, ve);
        for (int t = 0; t < tokens.length; t += 2) {
          if (ResponseHead.equalsLower(raw, tokens[t], tokens[t + 1], CLOSE)) {
            close = true;
          } else if (ResponseHead.equalsLower(raw, tokens[t], tokens[t + 1], KEEP_ALIVE)) {
            keepAliveToken = true;
          } else {
            namesListed = true;
          }
        }
      }
      count++;
      pos = eol + 1;
    }
    boolean[] hop = new boolean[count];
    for (int i = 0; i < count; i++) {
      int ns = fields[i * 4];
      int ne = fields[i * 4 + 1];
      hop[i] = HopByHop.isName(raw, ns, ne)
          // a Content-Length beside Transfer-Encoding is not forwarded (RFC 9112 section 6.3, item 3)
          || anyTe && ResponseHead.equalsLower(raw, ns, ne, ResponseHead.CONTENT_LENGTH);
    }
    if (connections > 0 && namesListed) {
      // fields named by Connection are hop-by-hop too (RFC 9110 section 7.6.1)
      for (int i = 0; i < count; i++) {
        if (!ResponseHead.equalsLower(raw, fields[i * 4], fields[i * 4 + 1], CONNECTION)) {
          continue;
        }
        int[] tokens = tokens(raw, fields[i * 4 + 2], fields[i * 4 + 3]);
        for (int t = 0; t < tokens.length; t += 2) {
          for (int j = 0; j < count; j++) {
            if (ResponseHead.equalsIgnoreCase(raw, fields[j * 4], fields[j * 4 + 1], tokens[t], tokens[t + 1])) {
              hop[j] = true;
            }
          }
        }
      }
    }
    boolean keepAlive = http10 ? keepAliveToken && !close : !close;
    Framing framing;
    if (status < 200 || noBody || status == 204 || status == 304) {
      framing = Framing.NONE;
    } else if (anyTe) {
      framing = chunked && te >= 0 ? Framing.CHUNKED : Framing.UNTIL_CLOSE;
      contentLength = -1;
      if (http10) {
        keepAlive = false; // Transfer-Encoding in HTTP/1.0 is faulty framing: close after it (section 6.1)
      }
    } else if (contentLength == 0) {
      framing = Framing.NONE;
    } else if (contentLength > 0) {
      framing = Framing.FIXED;
    } else {
      framing = Framing.UNTIL_CLOSE;
    }
    if (framing == Framing.UNTIL_CLOSE) {
      keepAlive = false;
    }
    return new ResponseHead(status, http10, keepAlive, framing, framing == Framing.FIXED ? contentLength : -1,
        raw, reasonStart, Math.max(reasonStart, statusEnd), fields, count, hop);
  }

  private static final byte[] CONNECTION = ascii("connection");
  private static final byte[] KEEP_ALIVE = ascii("keep-alive");
  private static final byte[] CLOSE = ascii("close");
  private static final byte[] CHUNKED = ascii("chunked");

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  // ---- bodies ----

  private void fixed(ByteBuf in, List<Object> out) {
    int n = (int) Math.min(in.readableBytes(), remaining);
    if (n == 0) {
      return;
    }
    remaining -= n;
    boolean last = remaining == 0;
    if (last) {
      state = State.HEAD;
    }
    out.add(new ResponseBody(in.readRetainedSlice(n), n, last));
  }

  private void chunked(ByteBuf in, List<Object> out) {
    int start = in.readerIndex();
    int pos = start;
    int end = in.writerIndex();
    long data = 0;
    boolean last = false;
    scan:
    while (true) {
      switch (state) {
        case CHUNK_SIZE -> {
          int lf = in.indexOf(pos, Math.min(end, pos + MAX_CHUNK_LINE), (byte) '\n');
          if (lf < 0) {
            if (end - pos >= MAX_CHUNK_LINE) {
              fail(in, out, "a chunk-size line is longer than " + MAX_CHUNK_LINE + " bytes");
              return;
            }
            break scan;
          }
          long size = chunkSize(in, pos, lf);
          if (size < 0) {
            fail(in, out, "a chunk-size line is not a hexadecimal size");
            return;
          }
          pos = lf + 1;
          if (size == 0) {
            state = State.TRAILERS;
            trailerBytes = 0;
          } else {
            remaining = size;
            state = State.CHUNK_DATA;
          }
        }
        case CHUNK_DATA -> {
          int n = (int) Math.min(end - pos, remaining);
          if (n == 0) {
            break scan;
          }
          if (dechunk) {
            in.readerIndex(pos);
            out.add(new ResponseBody(in.readRetainedSlice(n), n, false));
          } else {
            data += n;
          }
          pos += n;
          remaining -= n;
          if (remaining == 0) {
            state = State.CHUNK_END;
          }
        }
        case CHUNK_END -> {
          if (end - pos < 1) {
            break scan;
          }
          byte b = in.getByte(pos);
          if (b == '\n') {
            pos += 1;
          } else if (b == '\r') {
            if (end - pos < 2) {
              break scan;
            }
            if (in.getByte(pos + 1) != '\n') {
              fail(in, out, "chunk data is longer than its chunk size");
              return;
            }
            pos += 2;
          } else {
            fail(in, out, "chunk data is longer than its chunk size");
            return;
          }
          state = State.CHUNK_SIZE;
        }
        case TRAILERS -> {
          int room = maxHead - trailerBytes;
          int lf = in.indexOf(pos, Math.min(end, pos + room), (byte) '\n');
          if (lf < 0) {
            if (end - pos >= room) {
              fail(in, out, "the trailer section is larger than " + maxHead + " bytes");
              return;
            }
            break scan;
          }
          int lineEnd = lf > pos && in.getByte(lf - 1) == '\r' ? lf - 1 : lf;
          if (lineEnd == pos) {
            pos = lf + 1;
            last = true;
            state = State.HEAD;
            break scan;
          }
          byte first = in.getByte(pos);
          if (first == ' ' || first == '\t' || in.indexOf(pos, lineEnd, (byte) ':') < 0) {
            fail(in, out, "a trailer field line is not name: value");
            return;
          }
          trailerBytes += lf + 1 - pos;
          pos = lf + 1;
        }
        default -> throw new AssertionError(state);
      }
    }
    if (dechunk) {
      in.readerIndex(pos);
      if (last) {
        out.add(ResponseBody.end());
      }
    } else if (pos > start) {
      out.add(new ResponseBody(in.readRetainedSlice(pos - start), data, last));
    }
  }

  private void fail(ByteBuf in, List<Object> out, String why) {
    state = State.FAILED;
    in.skipBytes(in.readableBytes());
    out.add(ResponseHead.failed(why));
  }

  // ---- lexical helpers (RFC 9110 section 5.6) ----

  /** chunk-size [ chunk-ext ] CRLF: the size, or -1 when the line is not one. */
  private static long chunkSize(ByteBuf in, int from, int lf) {
    long size = 0;
    int digits = 0;
    int i = from;
    for (; i < lf; i++) {
      int d = Character.digit(in.getByte(i), 16);
      if (d < 0) {
        break;
      }
      if (++digits > 15) {
        return -1; // more than any body this gateway would forward
      }
      size = size * 16 + d;
    }
    if (digits == 0) {
      return -1;
    }
    for (; i < lf; i++) {
      byte c = in.getByte(i);
      if (c == '\r' && i == lf - 1) {
        break;
      }
      if (c == ';') {
        for (int j = i + 1; j < lf; j++) {
          byte e = in.getByte(j);
          if (ctl(e) && !(e == '\r' && j == lf - 1)) {
            return -1;
          }
        }
        break;
      }
      if (c != ' ' && c != '\t') {
        return -1;
      }
    }
    return size;
  }

  private static long contentLength(byte[] raw, int from, int to) {
    // a list of identical values is one value (RFC 9110 section 8.6)
    long value = -1;
    int i = from;
    while (i < to) {
      while (i < to && (raw[i] == ' ' || raw[i] == '\t')) {
        i++;
      }
      long v = 0;
      int digits = 0;
      while (i < to && digit(raw[i])) {
        if (++digits > 18) {
          return -1;
        }
        v = v * 10 + (raw[i] - '0');
        i++;
      }
      while (i < to && (raw[i] == ' ' || raw[i] == '\t')) {
        i++;
      }
      if (digits == 0 || (i < to && raw[i] != ',') || (value >= 0 && v != value)) {
        return -1;
      }
      value = v;
      i++;
    }
    return value;
  }

  private static boolean lastTokenIsChunked(byte[] raw, int from, int to) {
    int[] t = tokens(raw, from, to);
    if (t.length == 0) {
      return false;
    }
    int s = t[t.length - 2];
    int e = t[t.length - 1];
    // a coding may carry parameters; chunked has none
    return ResponseHead.equalsLower(raw, s, e, CHUNKED);
  }

  /** Comma-separated list elements, trimmed, as start/end pairs; empty elements skipped. */
  private static int[] tokens(byte[] raw, int from, int to) {
    int[] out = new int[8];
    int n = 0;
    int i = from;
    while (i <= to) {
      int s = i;
      while (i < to && raw[i] != ',') {
        i++;
      }
      int e = i;
      while (s < e && (raw[s] == ' ' || raw[s] == '\t')) {
        s++;
      }
      while (e > s && (raw[e - 1] == ' ' || raw[e - 1] == '\t')) {
        e--;
      }
      if (e > s) {
        if (n + 2 > out.length) {
          out = Arrays.copyOf(out, out.length * 2);
        }
        out[n++] = s;
        out[n++] = e;
      }
      i++;
    }
    return Arrays.copyOf(out, n);
  }

  private static int indexOf(byte[] raw, int from, byte b) {
    for (int i = from; i < raw.length; i++) {
      if (raw[i] == b) {
        return i;
      }
    }
    return raw.length;
  }

  private static boolean startsWith(byte[] raw, String prefix) {
    if (raw.length < prefix.length()) {
      return false;
    }
    for (int i = 0; i < prefix.length(); i++) {
      if (raw[i] != prefix.charAt(i)) {
        return false;
      }
    }
    return true;
  }

  private static boolean digit(byte b) {
    return b >= '0' && b <= '9';
  }

  /** A control character other than HTAB (RFC 9110 section 5.5 allows HTAB, SP, VCHAR, obs-text). */
  private static boolean ctl(byte b) {
    return (b >= 0 && b < 0x20 && b != '\t') || b == 0x7f;
  }

  /** tchar (RFC 9110 section 5.6.2), by byte value. */
  private static final boolean[] TCHAR = new boolean[128];

  static {
    for (int c = '0'; c <= '9'; c++) {
      TCHAR[c] = true;
    }
    for (int c = 'a'; c <= 'z'; c++) {
      TCHAR[c] = true;
      TCHAR[c - 'a' + 'A'] = true;
    }
    for (char c : "!#$%&'*+-.^_`|~".toCharArray()) {
      TCHAR[c] = true;
    }
  }

  private static boolean tchar(byte b) {
    return b >= 0 && TCHAR[b];
  }

  private static String printable(byte[] raw, int from, int to) {
    StringBuilder sb = new StringBuilder();
    for (int i = from; i < to; i++) {
      int c = raw[i] & 0xff;
      sb.append(c >= 0x20 && c < 0x7f ? (char) c : '?');
    }
    return sb.toString();
  }
}
