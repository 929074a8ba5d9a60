package dev.headroom.http;

import dev.headroom.PartitionKey;
import dev.headroom.QuotaPolicy;
import java.util.Optional;

/** {@link PartitionKeyExposure#off()}: never a {@code pk}, and says so. */
final class NoPartitionKeyExposure implements PartitionKeyExposure {
  static final NoPartitionKeyExposure INSTANCE = new NoPartitionKeyExposure();

  private NoPartitionKeyExposure() {}

  @Override
  public Optional<byte[]> pk(QuotaPolicy policy, PartitionKey key) {
    return Optional.empty();
  }

  @Override
  public boolean mayExpose() {
    return false;
  }

  @Override
  public String toString() {
    return "PartitionKeyExposure.off()";
  }
}
