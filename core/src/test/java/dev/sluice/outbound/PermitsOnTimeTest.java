package dev.sluice.outbound;

import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.RateLimitStore;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * No call is sent more than {@link Permits#maxLateness()} after its slot: one whose slot came back
 * later takes a new one, within what is left of its wait. Lateness is simulated on a clock the test
 * moves (the store's and the permits' alike): a reservation whose answer "comes back" late moves it
 * on. The limiter still sleeps for real for a wait it reserved, so the waits here are at most tens of
 * milliseconds, and nothing asserts on real time.
 */
class PermitsOnTimeTest {

    /** One call every 100 ms, burst 1. */
    private static final Limit TEN = Limit.of("provider", 10, Duration.ofSeconds(1)).withBurst(1);
    private static final Duration FIFTY = Duration.ofMillis(50);

    /** Nanoseconds on the test's clock. */
    private final AtomicLong nanos = new AtomicLong();

    /**
     * A memory store on the test's clock whose reservations' answers come back late by the next of
     * {@link #returnTrips} (none once it is empty), and which fails every call while {@link #failing}.
     */
    private final class SlowAnswers implements RateLimitStore {
        final MemoryStore store = MemoryStore.builder().timeSource(() -> 1_700_000_000_000_000L + nanos.get() / 1_000)
                .build();
        final Queue<Duration> returnTrips = new ArrayDeque<>();
        /** The policy of each reservation's first limit, in order. */
        final List<String> reserved = new ArrayList<>();
        boolean failing;

        SlowAnswers late(Duration... trips) {
            returnTrips.addAll(List.of(trips));
            return this;
        }

        @Override
        public CompletionStage<Decision> decide(String caller, List<Limit> limits) {
            return store.decide(caller, limits);
        }

        @Override
        public synchronized CompletionStage<Decision> reserve(String caller, List<Limit> limits, Duration maxWait) {
            reserved.add(limits.get(0).policy());
            CompletableFuture<Decision> answer = failing
                    ? CompletableFuture.failedFuture(new IllegalStateException("connection reset"))
                    : store.reserve(caller, limits, maxWait).toCompletableFuture();
            Duration trip = returnTrips.poll();
            if (trip != null) {
                nanos.addAndGet(trip.toNanos());
            }
            return answer;
        }

        @Override
        public void close() {
        }
    }

    private Permits permits(SlowAnswers store, Duration maxWait) {
        return Permits.builder(limiter(store, TEN)).maxWait(maxWait).maxLateness(FIFTY).nanoClock(nanos::get).build();
    }

    private static RateLimiter limiter(SlowAnswers store, Limit limit) {
        return RateLimiter.builder().limit(limit).store(store).failureMode(FailureMode.OPEN)
                .timeout(Duration.ofSeconds(2))
                .build();
    }

    @Test
    void aSlotThatCameBackLaterThanTheBoundIsNotSentAndTheCallTakesTheNextSlot() throws InterruptedException {
        SlowAnswers store = new SlowAnswers().late(Duration.ofMillis(80));
        Permits permits = permits(store, Duration.ofSeconds(1));

        // the slot at 0 came back at 80 ms: 30 ms beyond the bound; the next slot, at 100 ms, is 20 ms off
        Decision decision = permits.acquire("acct");

        assertThat(decision.outcome()).isEqualTo(Decision.Outcome.ALLOWED);
        assertThat(decision.retryAfter()).as("the wait for the next slot").isEqualTo(Duration.ofMillis(20));
        assertThat(store.reserved).as("reserved again").hasSize(2);
        Decision after = permits.limiter().acquire("acct", Duration.ZERO);
        assertThat(after.outcome()).as("the late slot passed unused, not handed to another call")
                .isEqualTo(Decision.Outcome.REJECTED);
        assertThat(after.retryAfter()).as("the slot after the one taken, at 200 ms").isEqualTo(Duration.ofMillis(120));
    }

    @Test
    void aSlotThatCameBackWithinTheBoundIsSent() throws InterruptedException {
        SlowAnswers store = new SlowAnswers().late(Duration.ofMillis(50));
        Decision decision = permits(store, Duration.ofSeconds(1)).acquire("acct");
        assertThat(decision.outcome()).isEqualTo(Decision.Outcome.ALLOWED);
        assertThat(decision.retryAfter()).isZero();
        assertThat(store.reserved).hasSize(1);
    }

    @Test
    void theNewSlotIsReservedWithinWhatIsLeftOfTheWait() {
        SlowAnswers store = new SlowAnswers().late(Duration.ofMillis(80));
        // 90 ms in all: 10 ms left after the late answer, and the next slot is 20 ms off
        Permits permits = permits(store, Duration.ofMillis(90));
        assertThatThrownBy(() -> permits.acquire("acct")).isInstanceOf(PermitUnavailableException.class)
                .hasMessage("no permit for 'acct' within 90 ms (REJECTED; the next would come in 20 ms)");
        assertThat(store.reserved).hasSize(2);
    }

    @Test
    void whenEverySlotComesBackLateUntilTheWaitRunsOutTheCallFailsNamingTheBound() {
        SlowAnswers store = new SlowAnswers().late(Duration.ofMillis(100), Duration.ofMillis(100));
        Permits permits = permits(store, Duration.ofMillis(200));
        // the slot at 0 came back at 100 ms, the one at 100 ms at 200 ms: the wait has run out
        assertThatThrownBy(() -> permits.acquire("acct"))
                .isInstanceOfSatisfying(PermitUnavailableException.class, e -> {
            assertThat(e)
                    .hasMessage("no permit for 'acct' on time within the wait: its last slot came back 100 ms after "
                    + "it, more than the 50 ms allowed (a slow store round trip, a thread woken late); the slots "
                    + "passed unused");
            assertThat(e.decision().outcome()).isEqualTo(Decision.Outcome.REJECTED);
            assertThat(e.retryAfter()).isZero();
        });
        assertThat(store.reserved).hasSize(2);
    }

    @Test
    void anAsyncCallWhoseSlotCameBackLateTakesTheNextSlot() throws Exception {
        SlowAnswers store = new SlowAnswers().late(Duration.ofMillis(80));
        Decision decision = permits(store, Duration.ofSeconds(1)).acquireAsync("acct").get(5, TimeUnit.SECONDS);
        assertThat(decision.outcome()).isEqualTo(Decision.Outcome.ALLOWED);
        assertThat(decision.retryAfter()).isEqualTo(Duration.ofMillis(20));
        assertThat(store.reserved).hasSize(2);

        SlowAnswers always = new SlowAnswers().late(Duration.ofMillis(100), Duration.ofMillis(100));
        CompletableFuture<Decision> late = permits(always, Duration.ofMillis(200)).acquireAsync("acct");
        assertThatThrownBy(() -> late.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(PermitUnavailableException.class)
                .hasMessageContaining("came back 100 ms after it, more than the 50 ms allowed");
        assertThat(always.reserved).hasSize(2);
    }

    @Test
    void aCallThatFailedOpenIsNotHeldToTheBound() throws InterruptedException {
        SlowAnswers store = new SlowAnswers().late(Duration.ofMillis(500));
        store.failing = true;
        Decision decision = permits(store, Duration.ofSeconds(1)).acquire("acct");
        assertThat(decision.outcome()).as("no slot, so no lateness: the failure mode decides")
                .isEqualTo(Decision.Outcome.FAILED_OPEN);
        assertThat(store.reserved).hasSize(1);
    }

    @Test
    void aLowPriorityCallWhoseSharedSlotCameBackLateBooksTheSharedLimitAgainNotItsLane() throws InterruptedException {
        // the lane's slot on time, the shared slot late, the next shared slot on time
        SlowAnswers store = new SlowAnswers().late(Duration.ZERO, Duration.ofMillis(80));
        Permits permits = Permits.builder(limiter(store, Limit.of("provider", 10, Duration.ofSeconds(1)).withBurst(2)))
                .maxWait(Duration.ofSeconds(1)).highPriorityShare(0.5).maxLateness(FIFTY).nanoClock(nanos::get).build();
        assertThat(permits.acquire("acct", Priority.LOW).allowed()).isTrue();
        assertThat(store.reserved).containsExactly("provider~low", "provider", "provider");
    }

    @Test
    void theBoundIsHalfTheIntervalBetweenSlotsAtLeast20MillisecondsByDefaultAndFromOneMillisecondToAnHour() {
        RateLimiter limiter = RateLimiter.builder().limit(TEN)
                .limit(Limit.of("provider-hourly", 1000, Duration.ofHours(1)))
                .build();
        Permits permits = Permits.of(limiter, Duration.ofSeconds(1));
        assertThat(permits.maxLateness()).as("half the per-second limit's 100 ms").isEqualTo(FIFTY);
        assertThat(Permits.of(RateLimiter.builder().limit(Limit.of("slow", 1, Duration.ofSeconds(2))).build(),
                Duration.ofSeconds(1)).maxLateness()).isEqualTo(Duration.ofSeconds(1));
        assertThat(Permits.builder(RateLimiter.builder().limit(Limit.of("minute", 600, Duration.ofMinutes(1))).build())
                .maxWait(Duration.ofSeconds(1)).build().maxLateness()).as("as 10/s").isEqualTo(FIFTY);
        // a store's round trip and a wake-up take milliseconds: at 2,000/s a bound of 1 ms wasted half the slots
        assertThat(Permits.of(RateLimiter.builder().limit(Limit.of("fast", 10_000, Duration.ofSeconds(1))).build(),
                Duration.ofSeconds(1)).maxLateness()).as("at least 20 ms").isEqualTo(Duration.ofMillis(20));
        assertThat(Permits.of(RateLimiter.builder().limit(Limit.of("at-25", 25, Duration.ofSeconds(1))).build(),
                Duration.ofSeconds(1)).maxLateness()).as("half of 40 ms").isEqualTo(Duration.ofMillis(20));
        assertThat(permits.toString()).contains("sending at most 50 ms after its slot");
        assertThat(permits.withLongestPause(Duration.ofMinutes(1)).maxLateness()).isEqualTo(FIFTY);
        assertThat(Permits.builder(limiter).maxWait(Duration.ofSeconds(1)).maxLateness(Duration.ofMillis(200)).build()
                .maxLateness()).isEqualTo(Duration.ofMillis(200));
        assertThatThrownBy(() -> Permits.builder(limiter).maxWait(Duration.ofSeconds(1)).maxLateness(Duration.ZERO)
                .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("'maxLateness' must be from 1 ms to 1h (e.g. Duration.ofMillis(50)), got 'PT0S'");
        assertThatThrownBy(() -> Permits.builder(limiter).maxWait(Duration.ofSeconds(1))
                .maxLateness(Duration.ofHours(2))
                .build()).hasMessage("'maxLateness' must be from 1 ms to 1h (e.g. Duration.ofMillis(50)), got 'PT2H'");
    }
}
