package dev.sluice;

import dev.sluice.spi.RateLimitStore;
import dev.sluice.internal.UnreadableStateException;
import dev.sluice.memory.MemoryStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The blocking and the asynchronous path through {@link StoreResilience} settle the same answer or
 * failure into the same decision, and count it the same way. The failing stores are hand-written
 * fault injections; the store that answers is a real {@link MemoryStore}.
 */
class StoreResilienceTest {

    private static final List<Limit> LIMITS = List.of(Limit.of("guarded", "5/1m"));
    private static final Duration TIMEOUT = Duration.ofMillis(50);

    /** A store whose every answer comes from {@code answer}; it remembers the futures it handed out. */
    private static final class Faulty implements RateLimitStore {
        final Supplier<CompletableFuture<Decision>> answer;
        final List<CompletableFuture<Decision>> handedOut = new CopyOnWriteArrayList<>();

        Faulty(Supplier<CompletableFuture<Decision>> answer) {
            this.answer = answer;
        }

        @Override
        public CompletionStage<Decision> decide(String caller, List<Limit> limits) {
            CompletableFuture<Decision> future = answer.get();
            handedOut.add(future);
            return future;
        }

        @Override
        public void close() {
        }
    }

    enum Fault {
        THROWS(() -> {
            throw new IllegalStateException("connection refused");
        }),
        FAILS(() -> CompletableFuture.failedFuture(new IllegalStateException("READONLY"))),
        FAILS_WRAPPED(() -> CompletableFuture.failedFuture(new CompletionException(new IllegalStateException("OOM")))),
        ANSWERS_NULL(() -> CompletableFuture.completedFuture(null)),
        FAILS_LATER(() -> CompletableFuture.supplyAsync(() -> {
            throw new IllegalStateException("LOADING");
        }, CompletableFuture.delayedExecutor(5, TimeUnit.MILLISECONDS))),
        NEVER_ANSWERS(CompletableFuture::new),
        UNREADABLE_STATE(() -> CompletableFuture.failedFuture(
                new UnreadableStateException("a key of this caller holds another type",
                        new IllegalStateException("WRONGTYPE"))));

        final Supplier<CompletableFuture<Decision>> answer;

        Fault(Supplier<CompletableFuture<Decision>> answer) {
            this.answer = answer;
        }
    }

    private static Decision async(RateGuard guard) {
        CompletableFuture<Decision> later = new CompletableFuture<>();
        Decision atOnce = guard.ask("c", LIMITS, System.nanoTime(), later::complete);
        return atOnce != null ? atOnce : later.orTimeout(10, TimeUnit.SECONDS).join();
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Fault.class)
    void bothPathsSettleAFailureIntoTheSameDecision(Fault fault) {
        for (FailureMode mode : FailureMode.values()) {
            RateGuard blocking = RateGuard.of(new Faulty(fault.answer), mode, TIMEOUT, "[guarded]");
            RateGuard asynchronous = RateGuard.of(new Faulty(fault.answer), mode, TIMEOUT, "[guarded]");

            Decision waited = blocking.await("c", LIMITS, System.nanoTime());
            Decision asked = async(asynchronous);

            assertThat(asked).as("%s, failing %s", fault, mode.configName()).isEqualTo(waited);
            assertThat(waited.outcome()).isEqualTo(switch (mode) {
                case OPEN -> Decision.Outcome.FAILED_OPEN;
                case CLOSED -> Decision.Outcome.FAILED_CLOSED;
                case LOCAL -> Decision.Outcome.LOCAL_ALLOWED; // the first request of a whole local budget
            });
            assertThat(waited.retryAfter())
                    .isEqualTo(mode == FailureMode.CLOSED ? StoreResilience.FAILED_CLOSED_RETRY : Duration.ZERO);
            assertThat(blocking.failures()).isEqualTo(1);
            assertThat(asynchronous.failures()).isEqualTo(1);
        }
    }

    @Test
    void bothPathsTellAStoreTheyGaveUpOnThatTheyTimedOut() {
        Faulty waitedOn = new Faulty(Fault.NEVER_ANSWERS.answer);
        Faulty askedOf = new Faulty(Fault.NEVER_ANSWERS.answer);
        RateGuard.of(waitedOn, FailureMode.CLOSED, TIMEOUT, "[guarded]").await("c", LIMITS, System.nanoTime());
        async(RateGuard.of(askedOf, FailureMode.CLOSED, TIMEOUT, "[guarded]"));
        for (Faulty store : List.of(waitedOn, askedOf)) {
            CompletableFuture<Decision> future = store.handedOut.get(0);
            assertThat(future).isCompletedExceptionally();
            assertThat(future.handle((d, failure) -> failure).join()).isInstanceOf(TimeoutException.class);
        }
    }

    @Test
    void bothPathsPassTheStoresDecisionThrough() {
        MemoryStore memory = MemoryStore.create();
        RateGuard guard = RateGuard.of(memory, FailureMode.CLOSED, TIMEOUT, "[guarded]");
        Decision waited = guard.await("c", LIMITS, System.nanoTime());
        Decision asked = async(guard);
        assertThat(waited.outcome()).isEqualTo(Decision.Outcome.ALLOWED);
        assertThat(waited.remaining()).isEqualTo(4);
        assertThat(asked.outcome()).isEqualTo(Decision.Outcome.ALLOWED);
        assertThat(asked.remaining()).isEqualTo(3);
        assertThat(guard.failures()).isZero();
    }

    @Test
    void failuresOfEitherPathOpenTheCircuitForBoth() {
        Faulty store = new Faulty(Fault.FAILS.answer);
        RateGuard guard = RateGuard.of(store, FailureMode.CLOSED, TIMEOUT, "[guarded]");
        // Read before the failure that opens the circuit, so no later than the pause begins: a
        // thread descheduled after that failure cannot make the pause look younger than it is.
        long opened = 0;
        for (int i = 0; i < CircuitBreaker.THRESHOLD; i++) {
            assertThat(guard.circuitOpen()).isFalse();
            opened = System.nanoTime();
            // alternately blocking and async: each is one counted failure
            Decision decision = i % 2 == 0 ? guard.await("c", LIMITS, System.nanoTime()) : async(guard);
            assertThat(decision.outcome()).isEqualTo(Decision.Outcome.FAILED_CLOSED);
        }
        assertThat(guard.circuitOpen()).isTrue();
        assertThat(guard.await("c", LIMITS, System.nanoTime()).outcome()).isEqualTo(Decision.Outcome.FAILED_CLOSED);
        assertThat(async(guard).outcome()).isEqualTo(Decision.Outcome.FAILED_CLOSED);
        assertThat(guard.failures()).isEqualTo(CircuitBreaker.THRESHOLD + 2);
        if (System.nanoTime() - opened < TimeUnit.MILLISECONDS.toNanos(200)) {
            // within the breaker's first 250 ms pause no probe may pass (a stalled test machine may see one)
            assertThat(store.handedOut).as("an open circuit does not ask the store").hasSize(CircuitBreaker.THRESHOLD);
        }
    }

    /** A store that answers it cannot read one caller's state fails that request alone: the circuit stays closed. */
    @Test
    void aCallersUnreadableStateFailsItsRequestButNeverOpensTheCircuit() {
        RateGuard guard = RateGuard.of(new Faulty(Fault.UNREADABLE_STATE.answer), FailureMode.CLOSED, TIMEOUT,
                "[guarded]");
        for (int i = 0; i < 2 * CircuitBreaker.THRESHOLD; i++) {
            Decision decision = i % 2 == 0 ? guard.await("c", LIMITS, System.nanoTime()) : async(guard);
            assertThat(decision.outcome()).isEqualTo(Decision.Outcome.FAILED_CLOSED);
        }
        assertThat(guard.failures()).isEqualTo(2 * CircuitBreaker.THRESHOLD);
        assertThat(guard.circuitOpen()).isFalse();
    }

    @Test
    void aTimedOutAsyncDecisionCompletesOnTheLimitersExecutor() throws InterruptedException {
        List<String> threads = new CopyOnWriteArrayList<>();
        // The executor's threads complete nothing before the continuation below is registered: a
        // continuation registered on a stage already complete would run on this thread, whichever
        // thread had completed it. So whatever thread the continuation runs on completed the stage.
        CountDownLatch registered = new CountDownLatch(1);
        Executor executor = task -> {
            Thread thread = new Thread(() -> {
                try {
                    if (registered.await(10, TimeUnit.SECONDS)) {
                        task.run();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "guard-test-executor");
            thread.start();
        };
        RateLimiter limiter = RateLimiter.builder().limits(LIMITS).store(new Faulty(Fault.NEVER_ANSWERS.answer))
                .failureMode(FailureMode.CLOSED).timeout(TIMEOUT).executor(executor).build();
        CompletableFuture<Decision> decided = limiter.decideAsync("c")
                .thenApply(d -> {
                    threads.add(Thread.currentThread().getName());
                    return d;
                })
                .toCompletableFuture();
        registered.countDown();
        Decision decision = decided.orTimeout(10, TimeUnit.SECONDS).join();
        assertThat(decision.outcome()).isEqualTo(Decision.Outcome.FAILED_CLOSED);
        assertThat(threads).containsExactly("guard-test-executor");
        assertThat(limiter.storeFailures()).isEqualTo(1);
    }
}
