package dev.headroom.gateway.config;

import java.net.URL;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/** {@code plans.resolver}: where a request's plan is read from. */
public sealed interface PlanSource {

  /**
   * {@code type: api-key-file}: the SHA-256 of the key in {@code header}, looked up in a file of
   * {@code <sha256-hex> <plan>} lines, read again whenever the file changes.
   */
  record KeyFile(Path file, String header) implements PlanSource {}

  /**
   * {@code type: jwt}: the {@code claim} of the bearer token, verified against a JWKS file or URL
   * (RS256, ES256, EdDSA) and/or an HS256 key read from {@code keyEnv} or {@code keyFile} (base64,
   * at least 32 bytes), with {@code exp}, {@code nbf} and, when set, {@code aud} and {@code iss}
   * checked. The key never appears in {@link #toString()}.
   */
  record Jwt(Optional<Path> jwksFile, Optional<URL> jwksUrl, Optional<String> hmacKeyBase64, String claim,
      Optional<String> audience, Optional<String> issuer, Duration clockSkew) implements PlanSource {
    @Override
    public String toString() {
      return "Jwt[jwksFile=" + jwksFile + ", jwksUrl=" + jwksUrl + ", hmacKey=" + (hmacKeyBase64.isPresent() ? "(set)" : "none")
          + ", claim=" + claim + ", audience=" + audience + ", issuer=" + issuer + ", clockSkew=" + clockSkew + "]";
    }
  }

  /**
   * {@code type: sql}: the first column of the first row of {@code query}, its one parameter the
   * SHA-256 hex of the key in {@code header}, on a HikariCP pool of {@code poolSize} connections to
   * {@code url} (PostgreSQL), answered within {@code deadline}, cached ({@code cache.maxEntries},
   * {@code cache.ttl}, {@code cache.negativeTtl}). The password, read from {@code passwordEnv} or
   * {@code passwordFile}, never appears in {@link #toString()}.
   */
  record Sql(String url, Optional<String> user, Optional<String> password, String query, String header,
      Duration deadline, int poolSize, int maxEntries, Duration ttl, Duration negativeTtl) implements PlanSource {
    @Override
    public String toString() {
      return "Sql[url=" + url + ", user=" + user + ", password=" + (password.isPresent() ? "(set)" : "none")
          + ", query=" + query + ", header=" + header + ", deadline=" + deadline + ", poolSize=" + poolSize
          + ", maxEntries=" + maxEntries + ", ttl=" + ttl + ", negativeTtl=" + negativeTtl + "]";
    }
  }
}
