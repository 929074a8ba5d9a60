package dev.headroom.gateway.internal.tls;

import java.nio.file.Path;

/**
 * A TLS file that cannot serve, of the listener ({@code listen.tls}) or of an upstream
 * ({@code upstreams.NAME.tls}), read by {@link PemFiles}: its message is one line naming the
 * setting, the file, what it holds instead and what was expected, such as {@code listen.tls.key: "/etc/headroom/key.pem" does not
 * match the certificate in "/etc/headroom/cert.pem"; expected the private key of that certificate}.
 */
public final class TlsFileException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  TlsFileException(String setting, Path file, String what) {
    super(setting + ": \"" + file + "\" " + what, null, false, false);
  }
}
