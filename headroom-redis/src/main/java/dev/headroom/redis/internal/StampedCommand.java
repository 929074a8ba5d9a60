package dev.headroom.redis.internal;

import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.ProtocolKeyword;
import io.netty.buffer.ByteBuf;

/**
 * A call of the decision code that marks its {@link WriteStamp} when Lettuce encodes it into the
 * channel. Lettuce's {@code CommandEncoder} encodes a command on the connection's I/O thread as it
 * writes it, and the write is flushed in the same task, so the mark is the moment the command
 * leaves the store's own queue for the socket. Lettuce wraps the command (an {@code AsyncCommand},
 * a Cluster redirection) in wrappers that delegate {@code encode} to it.
 */
final class StampedCommand extends Command<byte[], byte[], long[]> {
  private final WriteStamp stamp;

  StampedCommand(ProtocolKeyword type, CommandArgs<byte[], byte[]> args, WriteStamp stamp) {
    super(type, new LongArrayOutput(), args);
    this.stamp = stamp;
  }

  @Override
  public void encode(ByteBuf buf) {
    stamp.mark();
    super.encode(buf);
  }
}
