package dev.sluice.outbound;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link Permits.Builder}'s checks, the lane it derives, and a low-priority call given up in its lane. */
class PermitsPrioritiesTest {

    private static final Limit TEN = Limit.of("provider", 10, Duration.ofSeconds(1)).withBurst(4);

    private static RateLimiter limiter(Limit limit) {
        return RateLimiter.builder().limit(limit).build();
    }

    @Test
    void theBuilderRefusesWhatCannotWorkNamingTheSetting() {
        assertThatThrownBy(() -> Permits.builder(limiter(TEN)).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'maxWait'");
        for (double share : new double[] {0, 1, -0.5, Double.NaN}) {
            assertThatThrownBy(() -> Permits.builder(limiter(TEN)).maxWait(Duration.ofSeconds(1))
                    .highPriorityShare(share).build())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'highPriorityShare' must be a fraction greater than 0 and less than 1")
                    .hasMessageContaining("got '" + share + "'");
        }
        assertThatThrownBy(() -> Permits.builder(limiter(TEN)).maxWait(Duration.ofSeconds(1)).highPriorityShare(0.95)
                .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "'highPriorityShare' 0.95 leaves low-priority calls no whole unit of limit 'provider: "
                        + "token-bucket "
                        + "10/1s burst 4 cost 1'; lower the share, or raise the count and period together");
        assertThatThrownBy(() -> Permits.builder(limiter(TEN)).maxWait(Duration.ofSeconds(1))
                .lowPriorityMaxWait(Duration.ofSeconds(9)).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'lowPriorityMaxWait' applies only with priorities");
        assertThatThrownBy(() -> Permits.builder(limiter(TEN)).maxWait(Duration.ofSeconds(1)).highPriorityShare(0.3)
                .lowPriorityMaxWait(Duration.ofHours(2)).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'maxWait'");
    }

    @Test
    void theLaneIsEachLimitScaledByOneMinusTheShareRoundedDown() {
        Permits permits = Permits.builder(limiter(TEN)).maxWait(Duration.ofSeconds(1)).highPriorityShare(0.3).build();
        assertThat(permits.hasPriorities()).isTrue();
        assertThat(permits.lowPriorityLimits())
                .containsExactly(Limit.of("provider~low", 7, Duration.ofSeconds(1)).withBurst(2));
        assertThat(permits.lowPriorityMaxWait()).isEqualTo(Duration.ofSeconds(1));
        Permits plain = Permits.of(limiter(TEN), Duration.ofSeconds(1));
        assertThat(plain.hasPriorities()).isFalse();
        assertThat(plain.lowPriorityLimits()).isEmpty();
    }

    @Test
    void aLowPriorityCallCancelledInItsLaneNeverBooksTheSharedLimit() throws Exception {
        // shared 2 per second, burst 2; lane 1 per second, burst 1
        Permits permits = Permits.builder(limiter(Limit.of("provider", 2, Duration.ofSeconds(1)).withBurst(2)))
                .maxWait(Duration.ofSeconds(5)).highPriorityShare(0.5).build();
        long started = System.nanoTime();
        permits.acquire("p", Priority.LOW);
        CompletableFuture<Decision> waiting = permits.acquireAsync("p", Priority.LOW);
        assertThat(waiting.isDone()).as("waits for the lane's next slot, a second on").isFalse();
        assertThat(waiting.cancel(false)).isTrue();
        // past the cancelled call's lane slot (1 s): had it booked the shared limit then, one
        // permit would be left, not two
        TimeUnit.NANOSECONDS.sleep(started + TimeUnit.MILLISECONDS.toNanos(1300) - System.nanoTime());
        assertThat(permits.acquire("p", Priority.HIGH).retryAfter()).isZero();
        assertThat(permits.limiter().acquire("p", Duration.ZERO).outcome()).as("the second permit of the shared burst")
                .isEqualTo(Decision.Outcome.ALLOWED);
    }
}
