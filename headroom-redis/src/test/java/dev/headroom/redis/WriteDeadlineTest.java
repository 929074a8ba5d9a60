package dev.headroom.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.Acquisition;
import dev.headroom.Decision;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaPolicy;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.CommandOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The decision deadline measures Redis, not this process's own backlog: it counts from the moment
 * the command is written to the connection. Each test holds the connection's I/O thread (a reply
 * whose decoding waits on a latch: the one thread that writes every caller's command is busy, as
 * on a saturated machine) while a healthy Redis stands ready, and shows what a decision gets:
 * Redis's own answer once the thread is free, however long the wait before the write; a refusal
 * as this process's overload ({@link StoreOverloadedException}, whatever the failure policy) when
 * the wait passes the write timeout or too many decisions are outstanding. A Redis that does not
 * answer after the write still gets the failure policy ({@code FaultsTest}).
 */
class WriteDeadlineTest {
  static final QuotaPolicy TEN = QuotaPolicy.builder("ten").quota(10).window(Duration.ofHours(1)).build();
  static final PartitionKey K = PartitionKey.of("client:held");
  static final Duration DEADLINE = Duration.ofMillis(100);

  RedisClient client;
  StatefulRedisConnection<byte[], byte[]> connection;
  String prefix;
  final CountDownLatch entered = new CountDownLatch(1);
  final CountDownLatch release = new CountDownLatch(1);

  @BeforeEach
  void connect() {
    prefix = LocalRedis.uniquePrefix("write-deadline");
    client = RedisClient.create(LocalRedis.URI);
    connection = client.connect(ByteArrayCodec.INSTANCE);
  }

  @AfterEach
  void close() {
    release.countDown();
    connection.close();
    client.shutdown();
    LocalRedis.deleteAll(prefix);
  }

  RedisStore.Builder store(FailurePolicy policy) {
    return RedisStore.builder().connection(connection).keyPrefix(prefix).failurePolicy(policy).decisionDeadline(DEADLINE);
  }

  /** Occupies the connection's I/O thread until {@link #release}: it decodes a PONG that will not finish. */
  void holdIoThread() throws InterruptedException {
    connection.async().dispatch(CommandType.PING, new CommandOutput<byte[], byte[], String>(ByteArrayCodec.INSTANCE, null) {
      @Override
      public void set(ByteBuffer bytes) {
        entered.countDown();
        try {
          release.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    });
    assertThat(entered.await(10, TimeUnit.SECONDS)).as("the I/O thread is held").isTrue();
  }

  long remaining(RedisStore s) {
    return s.acquire(List.of(Acquisition.of(TEN, K, 0))).outcomes().get(0).remaining();
  }

  @Test
  void aDecisionQueuedLongerThanTheDeadlineBeforeItsWriteIsDecidedByRedis() throws Exception {
    try (RedisStore s = store(FailurePolicy.FAIL_CLOSED).build()) {
      assertThat(remaining(s)).isEqualTo(10); // loads the code; Redis is healthy
      holdIoThread();
      CompletableFuture<Decision> async = s.acquireAsync(List.of(Acquisition.of(TEN, K))).toCompletableFuture();
      CompletableFuture<Decision> blocking = CompletableFuture.supplyAsync(() -> s.acquire(List.of(Acquisition.of(TEN, K))));
      // three deadlines pass while the commands wait to be written: before the change, both
      // decisions failed closed here ("Redis did not decide within 100 ms")
      assertThatThrownBy(() -> async.get(3 * DEADLINE.toMillis(), TimeUnit.MILLISECONDS))
          .isInstanceOf(TimeoutException.class);
      assertThat(blocking).isNotDone();
      release.countDown();
      assertThat(async.get(10, TimeUnit.SECONDS).allowed()).isTrue();
      assertThat(blocking.get(10, TimeUnit.SECONDS).allowed()).isTrue();
      assertThat(s.outstanding()).as("both counted out once answered").isZero();
      assertThat(s.deadlinesPassed()).isZero();
      assertThat(s.failures()).isZero();
      assertThat(s.givenBackLate()).isZero();
      assertThat(remaining(s)).as("both decisions counted in Redis, once").isEqualTo(8);
    }
  }

  @Test
  void aDecisionStillUnwrittenAfterTheWriteTimeoutIsRefusedAsOverloadWhateverThePolicy() throws Exception {
    try (RedisStore s = store(FailurePolicy.FAIL_OPEN).writeTimeout(Duration.ofMillis(200)).build()) {
      assertThat(remaining(s)).isEqualTo(10);
      holdIoThread();
      CompletableFuture<Decision> async = s.acquireAsync(List.of(Acquisition.of(TEN, K))).toCompletableFuture();
      assertThatThrownBy(() -> async.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
          .hasCauseInstanceOf(StoreOverloadedException.class)
          .hasMessageContaining("did not write the decision within 200 ms");
      assertThat(s.shed()).isEqualTo(1);
      assertThat(s.deadlinesPassed()).isZero();
      release.countDown();
      // Redis applies the command once it is written, and the store gives it back
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (s.givenBackLate() < 1 && System.nanoTime() < until) {
        Thread.onSpinWait();
      }
      assertThat(s.givenBackLate()).isEqualTo(1);
      until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      long left;
      while ((left = remaining(s)) != 10 && System.nanoTime() < until) {
        Thread.onSpinWait();
      }
      assertThat(left).as("nothing stays counted for the refused request").isEqualTo(10);
    }
  }

  @Test
  void moreOutstandingDecisionsThanAllowedAreRefusedAtOnceAsOverload() throws Exception {
    try (RedisStore s = store(FailurePolicy.FAIL_OPEN).maxOutstanding(1).build()) {
      assertThat(remaining(s)).isEqualTo(10);
      holdIoThread();
      CompletableFuture<Decision> first = s.acquireAsync(List.of(Acquisition.of(TEN, K))).toCompletableFuture();
      assertThat(s.outstanding()).isEqualTo(1);
      CompletableFuture<Decision> second = s.acquireAsync(List.of(Acquisition.of(TEN, K))).toCompletableFuture();
      assertThat(second).isCompletedExceptionally();
      assertThatThrownBy(second::join).hasCauseInstanceOf(StoreOverloadedException.class)
          .hasMessageContaining("already has 1 decisions waiting for Redis");
      assertThatThrownBy(() -> s.acquire(List.of(Acquisition.of(TEN, K)))).isInstanceOf(StoreOverloadedException.class);
      assertThat(s.shed()).isEqualTo(2);
      release.countDown();
      assertThat(first.get(10, TimeUnit.SECONDS).allowed()).isTrue();
      assertThat(remaining(s)).isEqualTo(9);
      assertThat(s.outstanding()).isZero();
    }
  }

  /**
   * Redis answers in time, but the reply waits in this process's socket buffer while the I/O
   * thread that reads it is held past the deadline: the expiry is run by that thread's loop,
   * after it has read what arrived, so Redis's answer wins. (Before: the timer thread failed the
   * decision closed at the deadline.) The decision's command goes right behind a {@code BLPOP}
   * that Redis holds for 200 ms, so it is written at once and both replies arrive together;
   * decoding the first holds the thread before it reaches the decision's reply.
   */
  @Test
  void aReplyThatArrivedInTimeWinsOverAStarvedIoThread() throws Exception {
    Duration deadline = Duration.ofSeconds(2);
    try (RedisStore s = store(FailurePolicy.FAIL_CLOSED).decisionDeadline(deadline).build()) {
      assertThat(remaining(s)).isEqualTo(10);
      connection.async().dispatch(CommandType.BLPOP, new CommandOutput<byte[], byte[], String>(ByteArrayCodec.INSTANCE, null) {
        @Override
        public void complete(int depth) {
          if (entered.getCount() > 0) {
            entered.countDown();
            try {
              release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
        }
      }, new CommandArgs<>(ByteArrayCodec.INSTANCE).addKey((prefix + "never").getBytes())
          .add("0.2"));
      CompletableFuture<Decision> async = s.acquireAsync(List.of(Acquisition.of(TEN, K))).toCompletableFuture();
      assertThat(entered.await(10, TimeUnit.SECONDS)).as("the I/O thread is held").isTrue();
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (LocalRedis.keys(prefix).isEmpty() && System.nanoTime() < until) {
        Thread.onSpinWait();
      }
      assertThat(LocalRedis.keys(prefix)).as("Redis applied the decision").isNotEmpty();
      // one and a half deadlines pass while the reply waits to be read
      assertThatThrownBy(() -> async.get(deadline.toMillis() * 3 / 2, TimeUnit.MILLISECONDS))
          .isInstanceOf(TimeoutException.class);
      release.countDown();
      assertThat(async.get(10, TimeUnit.SECONDS).allowed()).isTrue();
      assertThat(s.deadlinesPassed()).isZero();
      assertThat(remaining(s)).isEqualTo(9);
    }
  }

  @Test
  void builderRefusesBadBounds() {
    assertThatThrownBy(() -> RedisStore.builder().writeTimeout(Duration.ZERO))
        .hasMessage("writeTimeout: expected from 1 ms to 1 minute, got PT0S");
    assertThatThrownBy(() -> RedisStore.builder().maxOutstanding(0))
        .hasMessage("maxOutstanding: expected from 1 to 1000000, got 0");
  }
}
