package dev.headroom.gateway.internal.config;

import com.fasterxml.jackson.databind.JsonNode;
import dev.headroom.enforcement.partition.PartitionKeyExposures;
import dev.headroom.gateway.config.PartitionKeyMode;
import dev.headroom.gateway.config.PartitionKeySettings;
import dev.headroom.gateway.config.Route;
import dev.headroom.http.PartitionKeyExposure;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * Reads {@code pk}: how the {@code pk} parameter of the RateLimit fields is made, and, when any
 * route uses {@code hmac}, the key from the environment variable or file named.
 */
final class PartitionKeyReader extends SectionReader {
  /** The environment variables {@code pk.keyEnv} may name. */
  private final Function<String, String> env;

  PartitionKeyReader(List<String> problems, Function<String, String> env, Path folder) {
    super(problems, folder);
    this.env = env;
  }

  /**
   * {@code pk: {exposure: off|hash|hmac, keyEnv: NAME | keyFile: PATH}}. The HMAC key is read here,
   * once, from the environment variable or file named (base64, at least 32 bytes); it is never
   * written in the file, and no message repeats it.
   */
  PartitionKeySettings pk(JsonNode n, List<Route> routes) {
    PartitionKeyMode mode = PartitionKeyMode.OFF;
    Optional<String> keyEnv = Optional.empty();
    Optional<String> keyFile = Optional.empty();
    if (!n.isMissingNode() && object("pk", n)) {
      keys("pk", n, "exposure", "keyEnv", "keyFile");
      if (!n.path("exposure").isMissingNode()) {
        mode = pkMode("pk.exposure", n.path("exposure")).orElse(PartitionKeyMode.OFF);
      }
      keyEnv = optionalText("pk.keyEnv", n.path("keyEnv"));
      keyFile = optionalText("pk.keyFile", n.path("keyFile"));
      if (keyEnv.isPresent() && keyFile.isPresent()) {
        problem("pk.keyFile", n.path("keyFile"), "either keyEnv or keyFile, not both");
      }
    }
    boolean hmacUsed = mode == PartitionKeyMode.HMAC;
    for (Route r : routes) {
      hmacUsed |= r.pk().orElse(PartitionKeyMode.OFF) == PartitionKeyMode.HMAC;
    }
    Optional<PartitionKeyExposure> hmac = Optional.empty();
    if (hmacUsed) {
      String expected = "the base64 HMAC key (at least " + PartitionKeyExposures.MIN_HMAC_KEY_LENGTH + " bytes)";
      if (keyEnv.isEmpty() && keyFile.isEmpty()) {
        problem("pk.keyEnv", n.path("keyEnv"), "the name of an environment variable (or keyFile: a file) holding "
            + "the base64 HMAC key, because pk exposure hmac is used");
      }
      String key = secret("pk.keyEnv", keyEnv, "pk.keyFile", keyFile, env, expected).orElse(null);
      if (key != null) {
        try {
          hmac = Optional.of(PartitionKeyExposures.hmacSha256Base64(key));
        } catch (IllegalArgumentException e) {
          problems.add((keyEnv.isPresent() ? "pk.keyEnv" : "pk.keyFile") + ": " + e.getMessage());
        }
      }
    }
    return new PartitionKeySettings(mode, keyEnv, keyFile, hmac);
  }

  Optional<PartitionKeyMode> pkMode(String path, JsonNode n) {
    if (n.isTextual()) {
      for (PartitionKeyMode m : PartitionKeyMode.values()) {
        if (m.token().equals(n.asText())) {
          return Optional.of(m);
        }
      }
    } else if (n.isBoolean() && !n.asBoolean()) {
      return Optional.of(PartitionKeyMode.OFF); // YAML 1.1 reads a bare off as false
    }
    problem(path, n, "off, hash (a predictable SHA-256 a client can compute) or hmac (keyed)");
    return Optional.empty();
  }
}
