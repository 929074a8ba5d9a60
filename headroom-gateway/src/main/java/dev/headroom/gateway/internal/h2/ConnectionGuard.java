package dev.headroom.gateway.internal.h2;

import dev.headroom.gateway.internal.Timers;
import dev.headroom.gateway.internal.admin.GatewayMetrics;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http2.DefaultHttp2GoAwayFrame;
import io.netty.handler.codec.http2.Http2Connection;
import io.netty.handler.codec.http2.Http2ConnectionAdapter;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Exception;
import io.netty.handler.codec.http2.Http2Stream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Counts and bounds what an HTTP/2 client sends, frame by frame, before Netty's codec reads it: the
 * floods that cost a server work without costing the client a stream (RFC 9113 section 10.5, "Denial-of-Service
 * Considerations"). A connection past a bound ends with GOAWAY {@code ENHANCE_YOUR_CALM} whose debug data
 * names the bound, and the breach is counted in {@code headroom_http2_refused_total{kind}}.
 *
 * <p>Why a census of its own: Netty bounds some of these (RST_STREAM per window, consecutive empty DATA)
 * but ends the connection without a trace a meter can read, and leaves the others (SETTINGS and PING
 * floods from a client that does read its acks, WINDOW_UPDATE floods, zero-length CONTINUATION floods)
 * to the application. One scanner over the frame headers (9 bytes each, RFC 9113 section 4.1) sees every
 * kind and counts each the same way; Netty's own duplicates are switched off ({@link Http2Front}).
 *
 * <p>State: the client preface still to skip (24 bytes), the frame header being read (up to 9 bytes, a
 * header may straddle reads) and the payload bytes still to skip; the header block being continued (its
 * CONTINUATION frames and bytes); the highest client stream seen, and how many streams the bytes of the
 * current read not yet handed to the codec open; and for each counted kind the count in
 * the current fixed window of {@link #WINDOW} on the gateway's timers. The bounds, per window:
 * <ul>
 *   <li>{@link #MAX_SETTINGS} SETTINGS, {@link #MAX_PINGS} PING, {@link #MAX_PRIORITY} PRIORITY frames;
 *   <li>{@link #MAX_RESETS} RST_STREAM (the rapid reset attack, CVE-2023-44487: streams opened and
 *       cancelled at once, each costing the server a request);
 *   <li>{@link #MAX_EMPTY_DATA} DATA frames with neither payload nor END_STREAM (CVE-2019-9518);
 *   <li>WINDOW_UPDATE frames: {@link #BASE_WINDOW_UPDATES} plus two for every DATA frame the gateway sent
 *       in the window (a receiver updates as it consumes; a client that updates without being sent
 *       anything floods, CVE-2019-9517's kin);
 *   <li>streams refused for exceeding {@code SETTINGS_MAX_CONCURRENT_STREAMS}: each is refused by Netty
 *       with RST_STREAM {@code REFUSED_STREAM} and counted here; {@link #MAX_EXCESS_STREAMS} end the
 *       connection.
 * </ul>
 * and per header block (the 2024 CONTINUATION class, CVE-2024-27316 and kin): at most
 * {@link #MAX_CONTINUATIONS} CONTINUATION frames and {@code maxHeaderBytes} times two bytes of block,
 * whatever the frames' lengths (a flood of empty CONTINUATION frames grows nothing Netty measures).
 * HPACK bombs (a small block that decodes to a huge header list) are bounded by Netty's decoder at
 * {@code SETTINGS_MAX_HEADER_LIST_SIZE} and counted by {@link CountingFrameCodec}.
 *
 * <p>The guard also ends an idle connection ({@code timeouts.idle} without a frame and without an
 * open stream) and a draining one ({@link #retire}) with GOAWAY {@code NO_ERROR}.
 *
 * <p>Thread-safety: confined to the connection's event loop (streams run on it too).
 */
final class ConnectionGuard extends ChannelInboundHandlerAdapter {
  static final String NAME = "h2-guard";
  /** The length of the window in which frames of each kind are counted. */
  static final Duration WINDOW = Duration.ofSeconds(10);
  /** SETTINGS frames a client may send per window (a client sends one or two per connection). */
  static final int MAX_SETTINGS = 50;
  /** PING frames per window (keep-alive and bandwidth probes send a few). */
  static final int MAX_PINGS = 50;
  /** PRIORITY frames per window. */
  static final int MAX_PRIORITY = 500;
  /** RST_STREAM frames per window: the rapid reset bound. */
  static final int MAX_RESETS = 100;
  /** DATA frames without payload or END_STREAM per window. */
  static final int MAX_EMPTY_DATA = 50;
  /** WINDOW_UPDATE frames per window before the DATA the gateway sent earns more. */
  static final int BASE_WINDOW_UPDATES = 200;
  /** Streams refused for exceeding the concurrent stream limit, per window, before the connection ends. */
  static final int MAX_EXCESS_STREAMS = 100;
  /** CONTINUATION frames one header block may have. */
  static final int MAX_CONTINUATIONS = 16;

  private static final int PREFACE_LENGTH = 24;
  private static final int DATA = 0x0, HEADERS = 0x1, PRIORITY = 0x2, RST_STREAM = 0x3, SETTINGS = 0x4,
      PING = 0x6, WINDOW_UPDATE = 0x8, CONTINUATION = 0x9;
  private static final int END_STREAM = 0x1, END_HEADERS = 0x4, ACK = 0x1;

  private final GatewayMetrics metrics;
  private final Timers timers;
  private final Http2Connection connection;
  private final int maxConcurrentStreams;
  private final long maxBlockBytes;
  private final long idleNanos;

  private int prefaceLeft = PREFACE_LENGTH;
  private final byte[] header = new byte[9];
  private int headerRead;
  private long payloadLeft;
  /** Whether a header block is open (HEADERS without END_HEADERS), its CONTINUATION count and bytes. */
  private boolean continuing;
  private int continuations;
  private long blockBytes;
  private int highestStream;
  /** Whether the connection ended (a bound broken): what still arrives is dropped. */
  private boolean ended;

  private long windowStart;
  private int settings, pings, priorities, resets, emptyData, windowUpdates, excessStreams;
  private long dataSent;

  private ChannelHandlerContext ctx;
  private long lastActivity;
  private Timers.Timer idleTimer;
  private boolean retiring;

  ConnectionGuard(GatewayMetrics metrics, Timers timers, Http2Connection connection, int maxConcurrentStreams,
      int maxHeaderBytes, Duration idle) {
    this.metrics = metrics;
    this.timers = timers;
    this.connection = connection;
    this.maxConcurrentStreams = maxConcurrentStreams;
    this.maxBlockBytes = 2L * maxHeaderBytes + 1024;
    this.idleNanos = idle.toNanos();
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
    long now = timers.now();
    windowStart = now;
    lastActivity = now;
    // an HTTP/2 connection is read continuously: control frames must be answered whatever the streams
    // do, and each stream's unread data is bounded by its flow-control window
    ctx.channel().config().setAutoRead(true);
    ctx.read();
    scheduleIdleCheck(now + idleNanos);
    connection.addListener(new Http2ConnectionAdapter() {
      @Override
      public void onStreamClosed(Http2Stream stream) {
        if (retiring && connection.numActiveStreams() == 0) {
          ctx.close();
        }
      }
    });
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    cancelIdle();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    cancelIdle();
    ctx.fireChannelInactive();
  }

  /** One DATA frame of {@code bytes} the gateway wrote to the client: it earns the client WINDOW_UPDATEs. */
  void dataSent(int bytes) {
    dataSent += 1 + bytes / 16384;
  }

  /**
   * The gateway drains: GOAWAY {@code NO_ERROR} (no new stream is taken; those open finish), and the
   * connection closes when its last stream does (RFC 9113 section 6.8).
   */
  void retire() {
    if (retiring || !ctx.channel().isActive()) {
      return;
    }
    retiring = true;
    goAway("draining");
  }

  private void goAway(String why) {
    DefaultHttp2GoAwayFrame frame = new DefaultHttp2GoAwayFrame(Http2Error.NO_ERROR,
        ctx.alloc().buffer().writeBytes(why.getBytes(StandardCharsets.US_ASCII)));
    ctx.channel().writeAndFlush(frame).addListener(f -> {
      if (!f.isSuccess() || connection.numActiveStreams() == 0) {
        ctx.close();
      }
    });
  }

  private void scheduleIdleCheck(long at) {
    idleTimer = timers.schedule(ctx.executor(), at, this::idleCheck);
  }

  private void cancelIdle() {
    if (idleTimer != null) {
      idleTimer.cancel();
      idleTimer = null;
    }
  }

  private void idleCheck() {
    idleTimer = null;
    if (!ctx.channel().isActive() || ended) {
      return;
    }
    long now = timers.now();
    long due = lastActivity + idleNanos;
    if (now - due >= 0 && connection.numActiveStreams() == 0) {
      retiring = true;
      goAway("idle");
      return;
    }
    scheduleIdleCheck(now - due >= 0 ? now + idleNanos : due);
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!(msg instanceof ByteBuf in)) {
      ctx.fireChannelRead(msg);
      return;
    }
    if (ended) {
      in.release();
      return;
    }
    metrics.clientBytes(in.readableBytes());
    long now = timers.now();
    lastActivity = now;
    if (now - windowStart >= WINDOW.toNanos()) {
      windowStart = now;
      settings = pings = priorities = resets = emptyData = windowUpdates = excessStreams = 0;
      dataSent = 0;
    }
    int forwardFrom = in.readerIndex();
    int i = forwardFrom;
    int end = in.writerIndex();
    try {
      while (i < end) {
        if (prefaceLeft > 0) {
          int n = Math.min(prefaceLeft, end - i);
          prefaceLeft -= n;
          i += n;
          continue;
        }
        if (payloadLeft > 0) {
          int n = (int) Math.min(payloadLeft, end - i);
          payloadLeft -= n;
          i += n;
          continue;
        }
        if (headerRead == 0 && end - i >= 9) {
          in.getBytes(i, header, 0, 9);
          headerRead = 9;
          i += 9;
        } else {
          int n = Math.min(9 - headerRead, end - i);
          in.getBytes(i, header, headerRead, n);
          headerRead += n;
          i += n;
          if (headerRead < 9) {
            break;
          }
        }
        headerRead = 0;
        int frameStart = i - 9; // where the frame began in this buffer, or before it (a straddling header)
        String breach = frame();
        if (breach == null && newStream) {
          newStream = false;
          // the streams active once the codec has read what came before are at most those active now
          // plus those opened in between: only when that bound reaches the limit is what came before
          // handed to the codec first, so that the streams it counts active are this frame's peers
          // (most reads open many streams, each of which would otherwise be a read of the codec's own)
          if (connection.remote().numActiveStreams() + unforwardedStreams >= maxConcurrentStreams) {
            int upTo = Math.max(frameStart, forwardFrom);
            if (upTo > forwardFrom) {
              ctx.fireChannelRead(in.retainedSlice(forwardFrom, upTo - forwardFrom));
              forwardFrom = upTo;
            }
            unforwardedStreams = 0;
          }
          unforwardedStreams++;
          if (connection.remote().numActiveStreams() + unforwardedStreams > maxConcurrentStreams) {
            metrics.http2Refused("excess-streams");
            if (++excessStreams > MAX_EXCESS_STREAMS) {
              breach = "excess-streams: more than " + MAX_EXCESS_STREAMS + " streams beyond the "
                  + maxConcurrentStreams + " allowed at once in " + WINDOW.toSeconds() + "s";
            }
          }
        }
        if (breach != null) {
          int upTo = Math.max(frameStart, forwardFrom);
          if (upTo > forwardFrom) {
            ctx.fireChannelRead(in.retainedSlice(forwardFrom, upTo - forwardFrom));
          }
          forwardFrom = end;
          ended = true;
          ctx.fireExceptionCaught(new Breach(breach));
          return;
        }
      }
      if (end > forwardFrom) {
        ctx.fireChannelRead(in.retainedSlice(forwardFrom, end - forwardFrom));
      }
    } finally {
      unforwardedStreams = 0;
      in.release();
    }
  }

  /** Set by {@link #frame} when the frame opens a client stream. */
  private boolean newStream;
  /** The client streams opened by the bytes of this read not yet handed to the codec. */
  private int unforwardedStreams;

  /** Counts the frame whose header was just read; returns why the connection ends, or null. */
  private String frame() {
    long length = ((header[0] & 0xffL) << 16) | ((header[1] & 0xffL) << 8) | (header[2] & 0xffL);
    int type = header[3] & 0xff;
    int flags = header[4] & 0xff;
    int stream = ((header[5] & 0x7f) << 24) | ((header[6] & 0xff) << 16) | ((header[7] & 0xff) << 8) | (header[8] & 0xff);
    payloadLeft = length;
    if (continuing && type != CONTINUATION) {
      return null; // a protocol error Netty answers (RFC 9113 section 6.10)
    }
    switch (type) {
      case DATA:
        if (length == 0 && (flags & END_STREAM) == 0 && ++emptyData > MAX_EMPTY_DATA) {
          return count("empty-data-flood", "more than " + MAX_EMPTY_DATA + " empty DATA frames");
        }
        return null;
      case HEADERS:
        if ((stream & 1) == 1 && stream > highestStream) {
          highestStream = stream;
          newStream = true;
        }
        if ((flags & END_HEADERS) == 0) {
          continuing = true;
          continuations = 0;
          blockBytes = length;
        }
        return null;
      case CONTINUATION:
        if (!continuing) {
          return null; // a protocol error Netty answers
        }
        blockBytes += length;
        if (++continuations > MAX_CONTINUATIONS || blockBytes > maxBlockBytes) {
          continuing = false;
          return count("continuation-flood", "a header block of more than " + MAX_CONTINUATIONS
              + " CONTINUATION frames or " + maxBlockBytes + " bytes");
        }
        if ((flags & END_HEADERS) != 0) {
          continuing = false;
        }
        return null;
      case PRIORITY:
        return ++priorities > MAX_PRIORITY
            ? count("priority-flood", "more than " + MAX_PRIORITY + " PRIORITY frames") : null;
      case RST_STREAM:
        return ++resets > MAX_RESETS
            ? count("rapid-reset", "more than " + MAX_RESETS + " RST_STREAM frames") : null;
      case SETTINGS:
        return (flags & ACK) == 0 && ++settings > MAX_SETTINGS
            ? count("settings-flood", "more than " + MAX_SETTINGS + " SETTINGS frames") : null;
      case PING:
        return (flags & ACK) == 0 && ++pings > MAX_PINGS
            ? count("ping-flood", "more than " + MAX_PINGS + " PING frames") : null;
      case WINDOW_UPDATE:
        long allowed = BASE_WINDOW_UPDATES + 2 * dataSent;
        return ++windowUpdates > allowed
            ? count("window-update-flood", "more than " + allowed + " WINDOW_UPDATE frames") : null;
      default:
        return null;
    }
  }

  private String count(String kind, String what) {
    metrics.http2Refused(kind);
    return kind + ": " + what + " in " + WINDOW.toSeconds() + "s";
  }

  /** A bound broken: the codec answers it with GOAWAY {@code ENHANCE_YOUR_CALM}, its message the debug data. */
  static final class Breach extends Http2Exception {
    private static final long serialVersionUID = 1L;

    Breach(String message) {
      super(Http2Error.ENHANCE_YOUR_CALM, message, ShutdownHint.HARD_SHUTDOWN);
    }
  }
}
