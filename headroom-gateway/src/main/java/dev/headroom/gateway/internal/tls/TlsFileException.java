package dev.headroom.gateway.internal.tls;

import java.nio.file.Path;

/**
 * A file of the listener's TLS that cannot serve: its message is one line naming the setting, the
 * file and what was expected, such as {@code listen.tls.key: "/etc/headroom/key.pem" does not
 * match the certificate in "/etc/headroom/cert.pem"; expected the private key of that certificate}.
 */
public final class TlsFileException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  TlsFileException(String setting, Path file, String what) {
    super(setting + ": \"" + file + "\" " + what, null, false, false);
  }
}
