package dev.headroom.gateway.config;

import dev.headroom.http.PartitionKeyExposure;
import java.util.Optional;

/**
 * The {@code pk} settings: the default mode and, for {@code hmac}, the exposure made from the key
 * named by {@code keyEnv} or {@code keyFile} (the key itself is never part of the configuration,
 * its text, or its string form).
 */
public record PartitionKeySettings(PartitionKeyMode mode, Optional<String> keyEnv, Optional<String> keyFile,
    Optional<PartitionKeyExposure> hmac) {}
