package dev.headroom.enforcement.partition;

import dev.headroom.PartitionKey;

/**
 * The partition keys derived from one connection's peer address alone, kept for the connection's
 * life: a TCP connection's remote address never changes, so a {@code client-ip} key derived from
 * it (the peer is not a trusted proxy, so no forwarding header was read) is the same for every
 * request the connection carries. A front end that owns its connections (the standalone gateway)
 * makes one per connection ({@link #forConnection()}) and hands it to the gate through
 * {@link RequestView#peerKeys()}; {@link PartitionKeyDerivation#derive} then parses and formats
 * the address once per connection and derivation instead of once per request. A {@code client-cert}
 * key is kept the same way: the certificate is the TLS connection's, presented once in its handshake.
 *
 * <p>A key derived with a trusted peer is never kept: it depends on the forwarding header of each
 * request. Entries are keyed by the derivation's identity, so a reloaded configuration (new
 * derivations) derives anew; at most {@value #MAX_ENTRIES} are kept per connection.
 *
 * <p>Thread-safe: the entries are replaced whole (copy on write) and read through one volatile
 * field, so a request decided on another thread (an asynchronous plan resolver's) reads a
 * consistent set; two racing additions may lose one, which is then derived again.
 */
public final class PeerKeys {
  /** The most derivations whose key one connection keeps. */
  public static final int MAX_ENTRIES = 16;

  private static final Object[] EMPTY = new Object[0];

  /** Keeps nothing: for requests whose transport has no lasting connection (and the default). */
  public static final PeerKeys NONE = new PeerKeys(false);

  private final boolean keeps;
  /** Derivation, key, derivation, key, ...; replaced whole. */
  private volatile Object[] entries = EMPTY;

  private PeerKeys(boolean keeps) {
    this.keeps = keeps;
  }

  /** An empty set for a new connection. */
  public static PeerKeys forConnection() {
    return new PeerKeys(true);
  }

  /** The key kept for {@code derivation}, or null. */
  PartitionKey get(PartitionKeyDerivation derivation) {
    Object[] e = entries;
    for (int i = 0; i < e.length; i += 2) {
      if (e[i] == derivation) {
        return (PartitionKey) e[i + 1];
      }
    }
    return null;
  }

  /** Keeps {@code key} for {@code derivation}, while there is room. */
  void put(PartitionKeyDerivation derivation, PartitionKey key) {
    Object[] e = entries;
    if (!keeps || e.length >= 2 * MAX_ENTRIES) {
      return;
    }
    Object[] next = new Object[e.length + 2];
    System.arraycopy(e, 0, next, 0, e.length);
    next[e.length] = derivation;
    next[e.length + 1] = key;
    entries = next;
  }
}
