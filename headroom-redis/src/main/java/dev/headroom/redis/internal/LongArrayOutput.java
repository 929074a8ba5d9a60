package dev.headroom.redis.internal;

import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.CommandOutput;
import java.nio.ByteBuffer;

/**
 * The decision code's reply (a flat array of integers) parsed straight into a {@code long[]}: no
 * list, no boxed {@code Long} per field. It runs on Lettuce's I/O thread, which every caller of a
 * connection shares, so its work is kept to storing numbers.
 *
 * <p>A reply of any other shape (a string or a nested array, which the code never sends) yields
 * {@code null}, which {@link DecisionScript#outcomes} reports as an unexpected reply. Redis errors
 * go through {@link CommandOutput#setError} as for any command.
 */
public final class LongArrayOutput extends CommandOutput<byte[], byte[], long[]> {

  private int next;
  private int depth;
  private boolean malformed;

  public LongArrayOutput() {
    super(ByteArrayCodec.INSTANCE, null);
  }

  @Override
  public void multi(int count) {
    if (depth++ > 0 || count < 0) {
      malformed = true;
      return;
    }
    output = new long[count];
  }

  @Override
  public void set(long integer) {
    if (output == null || next >= output.length) {
      malformed = true;
      return;
    }
    output[next++] = integer;
  }

  @Override
  public void set(ByteBuffer bytes) {
    malformed = true;
  }

  @Override
  public void set(double number) {
    malformed = true;
  }

  @Override
  public void set(boolean value) {
    malformed = true;
  }

  @Override
  public long[] get() {
    return malformed || output == null || next != output.length ? null : output;
  }
}
