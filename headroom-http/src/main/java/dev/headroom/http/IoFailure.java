package dev.headroom.http;

import java.io.EOFException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.net.http.HttpTimeoutException;
import java.nio.channels.ClosedChannelException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.net.ssl.SSLException;

/**
 * What a failed connection or file read means, in words, for texts people read (command output,
 * error bodies, configuration problems). Java's own texts are often a class name
 * ({@code AnnotatedConnectException}), a bare path ({@code NoSuchFileException}'s message is the
 * file) or nothing at all ({@code ConnectException} from {@code java.net.http}); this is the one
 * place that turns them into "connection refused" or "no such file". It walks the cause chain,
 * since clients wrap the failure that says what happened, and never names a class.
 */
public final class IoFailure {
  private IoFailure() {}

  private static final String CLOSED = "the connection was closed before an answer";

  /** Longest cause chain walked. */
  private static final int MAX_DEPTH = 8;

  /** The failure in words, such as {@code connection refused} or {@code no such file}. */
  public static String inWords(Throwable failure) {
    Throwable t = failure;
    for (int i = 0; t != null && i < MAX_DEPTH; i++, t = t.getCause()) {
      String words = known(t);
      if (words != null) {
        return words;
      }
    }
    String message = failure == null ? null : failure.getMessage();
    if (message == null || message.isBlank() || message.matches("[\\w.$]+(Exception|Error)\\b.*")) {
      return "an input/output error";
    }
    return message;
  }

  /** Failures whose type says it all, with their words; the first type that matches wins. */
  private static final List<Map.Entry<Class<? extends Throwable>, String>> BY_TYPE = List.of(
      Map.entry(HttpTimeoutException.class, "timed out"),
      Map.entry(SocketTimeoutException.class, "timed out"),
      Map.entry(ConnectException.class, "connection refused"),
      Map.entry(NoRouteToHostException.class, "no route to host"),
      Map.entry(ClosedChannelException.class, CLOSED),
      Map.entry(EOFException.class, CLOSED),
      Map.entry(SSLException.class, "the TLS handshake failed"),
      Map.entry(NoSuchFileException.class, "no such file"),
      Map.entry(AccessDeniedException.class, "permission denied"));

  private static String known(Throwable t) {
    String message = t.getMessage() == null ? "" : t.getMessage();
    String lower = message.toLowerCase(Locale.ROOT);
    if (lower.contains("timed out")) {
      return "timed out"; // Netty's ConnectTimeoutException is a ConnectException
    }
    if (lower.contains("connection reset")) {
      return CLOSED;
    }
    for (Map.Entry<Class<? extends Throwable>, String> e : BY_TYPE) {
      if (e.getKey().isInstance(t)) {
        return e.getValue();
      }
    }
    if (t instanceof UnknownHostException) {
      return message.isEmpty() ? "unknown host" : "unknown host " + message;
    }
    if (t instanceof FileSystemException f && f.getReason() != null) {
      return f.getReason().toLowerCase(Locale.ROOT);
    }
    return null;
  }
}
