package dev.sluice.redis;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.memory.MemoryStore;
import dev.sluice.testing.ManualClock;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The local copy of rejections, in front of a real in-memory store that counts the requests reaching it. */
class RejectionCacheTest {

    private static final long FOREVER = Long.MAX_VALUE;

    private final ManualClock clock = new ManualClock();
    private final Counting store = new Counting(MemoryStore.builder().timeSource(clock).build());
    private final List<Limit> limits = List.of(Limit.of("cached", "2/1m"));

    private Decision decide(RateLimitStore cache, String caller, boolean fresh) {
        return cache.decide(caller, limits, System.nanoTime() + FOREVER / 2, fresh).toCompletableFuture().join();
    }

    @Test
    void aRejectionIsRepeatedLocallyCountingDownUntilItsRetryAfter() {
        RejectionCache cache = new RejectionCache(store, 100, Duration.ofMinutes(5), clock);
        decide(cache, "a", false);
        decide(cache, "a", false);
        Decision first = decide(cache, "a", false);
        assertThat(first.outcome()).isEqualTo(Decision.Outcome.REJECTED);
        assertThat(first.retryAfter()).isEqualTo(Duration.ofSeconds(30));
        assertThat(store.calls.get()).isEqualTo(3);

        clock.advance(Duration.ofSeconds(20));
        Decision local = decide(cache, "a", false);
        assertThat(local.outcome()).isEqualTo(Decision.Outcome.REJECTED);
        assertThat(local.retryAfter()).as("counted down").isEqualTo(Duration.ofSeconds(10));
        assertThat(local.quotas().get(0).reset()).isEqualTo(first.quotas().get(0).reset().minusSeconds(20));
        assertThat(store.calls.get()).as("answered here").isEqualTo(3);

        clock.advance(Duration.ofSeconds(10));
        assertThat(decide(cache, "a", false).allowed()).as("at its retry-after the store decides").isTrue();
        assertThat(store.calls.get()).isEqualTo(4);
    }

    @Test
    void aRejectionIsTrustedNoLongerThanTheTtl() {
        RejectionCache cache = new RejectionCache(store, 100, Duration.ofSeconds(1), clock);
        decide(cache, "b", false);
        decide(cache, "b", false);
        decide(cache, "b", false); // rejected for 30 s
        clock.advance(Duration.ofMillis(999));
        decide(cache, "b", false);
        assertThat(store.calls.get()).isEqualTo(3);
        clock.advance(Duration.ofMillis(1));
        assertThat(decide(cache, "b", false).outcome()).isEqualTo(Decision.Outcome.REJECTED);
        assertThat(store.calls.get()).as("the store asked again after the ttl").isEqualTo(4);
    }

    @Test
    void aFreshRequestAndTheTwoArgumentDecideSeeTheSameCopy() {
        RejectionCache cache = new RejectionCache(store, 100, Duration.ofMinutes(1), clock);
        decide(cache, "c", false);
        decide(cache, "c", false);
        decide(cache, "c", false);
        decide(cache, "c", true);
        assertThat(store.calls.get()).as("fresh skips the copy").isEqualTo(4);
        cache.decide("c", limits).toCompletableFuture().join();
        assertThat(store.calls.get()).as("the plain decide reads it").isEqualTo(4);
        assertThat(decide(cache, "other", false).allowed()).isTrue();
    }

    @Test
    void resetForgetsTheCopyAndTheStoresState() {
        RejectionCache cache = new RejectionCache(store, 100, Duration.ofMinutes(1), clock);
        decide(cache, "d", false);
        decide(cache, "d", false);
        decide(cache, "d", false);
        cache.reset("d", limits).toCompletableFuture().join();
        Decision after = decide(cache, "d", false);
        assertThat(after.allowed()).isTrue();
        assertThat(after.remaining()).isEqualTo(1);
    }

    @Test
    void atMostTheConfiguredNumberOfCallersAreCopied() {
        RejectionCache cache = new RejectionCache(store, 10, Duration.ofMinutes(1), clock);
        for (int i = 0; i < 100; i++) {
            for (int n = 0; n < 3; n++) {
                decide(cache, "e" + i, false);
            }
        }
        int before = store.calls.get();
        for (int i = 0; i < 100; i++) {
            decide(cache, "e" + i, false);
        }
        assertThat(store.calls.get() - before).as("callers whose copy was not kept").isGreaterThanOrEqualTo(90);
    }

    /**
     * The copies are kept per caller: a caller refused under several sets of limits (routes, or
     * costs) takes one of the {@code maximumCallers} places, not one per set.
     */
    @Test
    void aCallerRefusedUnderSeveralLimitsTakesOnePlace() {
        RejectionCache cache = new RejectionCache(store, 10, Duration.ofMinutes(1), clock);
        List<Limit> other = List.of(Limit.of("cached-other", "1/1m"));
        for (int i = 0; i < 10; i++) {
            for (int n = 0; n < 3; n++) {
                decide(cache, "p" + i, false);
            }
        }
        for (int n = 0; n < 2; n++) {
            cache.decide("p0", other, System.nanoTime() + FOREVER / 2, false).toCompletableFuture().join();
        }
        int before = store.calls.get();
        for (int i = 0; i < 10; i++) {
            assertThat(decide(cache, "p" + i, false).outcome()).isEqualTo(Decision.Outcome.REJECTED);
        }
        assertThat(cache.decide("p0", other, System.nanoTime() + FOREVER / 2, false).toCompletableFuture().join()
                .outcome())
                .isEqualTo(Decision.Outcome.REJECTED);
        assertThat(store.calls.get() - before).as("requests that reached the store").isZero();
    }

    /** One caller's copies are bounded too: under a ninth set of limits its oldest copy goes. */
    @Test
    void aCallerKeepsItsCopiesUnderAtMostEightSetsOfLimits() {
        RejectionCache cache = new RejectionCache(store, 100, Duration.ofMinutes(1), clock);
        List<List<Limit>> sets = new ArrayList<>();
        for (int i = 0; i <= RejectionCopies.MAX_PER_CALLER; i++) {
            List<Limit> set = List.of(Limit.of("cached-" + i, "1/1m"));
            sets.add(set);
            for (int n = 0; n < 2; n++) {
                cache.decide("m", set, System.nanoTime() + FOREVER / 2, false).toCompletableFuture().join();
            }
        }
        int before = store.calls.get();
        for (List<Limit> set : sets.subList(1, sets.size())) {
            assertThat(cache.decide("m", set, System.nanoTime() + FOREVER / 2, false).toCompletableFuture().join()
                    .outcome())
                    .isEqualTo(Decision.Outcome.REJECTED);
        }
        assertThat(store.calls.get() - before).as("the newest eight copies answer locally").isZero();
        cache.decide("m", sets.get(0), System.nanoTime() + FOREVER / 2, false).toCompletableFuture().join();
        assertThat(store.calls.get() - before).as("the oldest copy was dropped").isEqualTo(1);
    }

    /** A refund forgets the caller's copies under every set of limits, and nobody else's. */
    @Test
    void aRefundForgetsTheCallersCopiesOnly() {
        RejectionCache cache = new RejectionCache(store, 100, Duration.ofMinutes(1), clock);
        List<Limit> other = List.of(Limit.of("cached-other", "1/1m"));
        for (String caller : List.of("r1", "r2")) {
            for (int n = 0; n < 3; n++) {
                decide(cache, caller, false);
                cache.decide(caller, other, System.nanoTime() + FOREVER / 2, false).toCompletableFuture().join();
            }
        }
        cache.refund("r1", limits).toCompletableFuture().join();
        int before = store.calls.get();
        assertThat(decide(cache, "r1", false).allowed()).as("refunded, asked again").isTrue();
        assertThat(cache.decide("r1", other, System.nanoTime() + FOREVER / 2, false).toCompletableFuture().join()
                .outcome())
                .as("its copy under the other limits is gone too").isEqualTo(Decision.Outcome.REJECTED);
        assertThat(store.calls.get() - before).as("both of r1's requests reached the store").isEqualTo(2);
        assertThat(decide(cache, "r2", false).outcome()).isEqualTo(Decision.Outcome.REJECTED);
        assertThat(store.calls.get() - before).as("r2's copy is kept").isEqualTo(2);
    }

    /** A store that takes keys is handed the one the cache built: a decision or refund builds it once. */
    @Test
    void aStoreThatTakesTagsIsHandedTheCallersTag() {
        List<String> tags = new ArrayList<>();
        RejectionCache cache = new RejectionCache(new ByKeyOnly(tags), 100, Duration.ofMinutes(1), clock);
        String caller = "key:" + "x".repeat(100); // hashed into its tag
        for (int n = 0; n < 4; n++) {
            decide(cache, caller, false);
        }
        cache.refund(caller, limits).toCompletableFuture().join();
        assertThat(tags).as("three decisions (the fourth copied), then the refund").hasSize(4)
                .containsOnly(dev.sluice.internal.Keys.tag(caller));
    }

    /**
     * Every way in (a decision without a deadline, a reset) hands the store behind the key the
     * cache built, so the store never builds the caller's tag again.
     */
    @Test
    void aDecisionWithoutDeadlineAndAResetAreHandedTheCallersTagToo() {
        List<String> tags = new ArrayList<>();
        RejectionCache cache = new RejectionCache(new ByKeyOnly(tags), 100, Duration.ofMinutes(1), clock);
        String caller = "key:" + "y".repeat(100);
        cache.decide(caller, limits).toCompletableFuture().join();
        cache.reset(caller, limits).toCompletableFuture().join();
        assertThat(tags).containsExactly(dev.sluice.internal.Keys.tag(caller), dev.sluice.internal.Keys.tag(caller));
    }

    @Test
    void aCallerThatGivesUpCompletesTheStoresFutureAndAFailureComesThroughAsItIs() {
        CompletableFuture<Decision> held = new CompletableFuture<>();
        RejectionCache cache = new RejectionCache(new Holding(held), 10, Duration.ofSeconds(1), clock);
        CompletableFuture<Decision> answer = cache.decide("f", limits, System.nanoTime(), false).toCompletableFuture();
        assertThat(answer.isDone()).isFalse();
        answer.completeExceptionally(new TimeoutException());
        assertThat(held.isCompletedExceptionally()).as("the store sees the caller gave up").isTrue();

        CompletableFuture<Decision> failing = new CompletableFuture<>();
        CompletableFuture<Decision> failed = new RejectionCache(new Holding(failing), 10, Duration.ofSeconds(1), clock)
                .decide("g", limits, System.nanoTime(), false).toCompletableFuture();
        IllegalStateException cause = new IllegalStateException("down");
        failing.completeExceptionally(cause);
        assertThatThrownBy(failed::join).hasCause(cause);
    }

    @Test
    void settingsAreCheckedNamingTheValue() {
        assertThatThrownBy(() -> new RejectionCache(store, 0, Duration.ofSeconds(1)))
                .hasMessage("'localRejections' must be at least 1, got '0'");
        assertThatThrownBy(() -> new RejectionCache(store, 1, Duration.ofNanos(999_999)))
                .hasMessage("'localRejectionTtl' must be at least 1ms, got 'PT0.000999999S'");
    }

    /** A real store that counts the decisions reaching it. */
    /** A store's rejection with a time in the past: passed on, not copied, never a failure. */
    @Test
    void aRejectionWhoseRetryIsPastIsPassedOnAndNotCopied() {
        Limit limit = limits.get(0);
        Decision past = new Decision(Decision.Outcome.REJECTED, List.of(new Decision.Quota(limit, false, 0,
                Duration.ofSeconds(-2), Duration.ofSeconds(-1), Duration.ofSeconds(-1))), Duration.ofSeconds(-1));
        for (boolean done : new boolean[] {true, false}) {
            CompletableFuture<Decision> answer = done ? CompletableFuture.completedFuture(past)
                    : new CompletableFuture<>();
            RejectionCache cache = new RejectionCache(new Holding(answer), 100, Duration.ofSeconds(1), clock);
            CompletableFuture<Decision> first = cache.decide("past", limits, System.nanoTime() + FOREVER / 2, false)
                    .toCompletableFuture();
            answer.complete(past);
            assertThat(first.join()).as(done ? "answered at once" : "answered later").isSameAs(past);
            CompletableFuture<Decision> again = cache.decide("past", limits, System.nanoTime() + FOREVER / 2, false)
                    .toCompletableFuture();
            assertThat(again.join()).as("the store is asked again").isSameAs(past);
        }
    }

    private static final class Counting implements RateLimitStore {
        final RateLimitStore store;
        final AtomicInteger calls = new AtomicInteger();

        Counting(RateLimitStore store) {
            this.store = store;
        }

        @Override
        public CompletionStage<Decision> decide(String caller, List<Limit> limits) {
            calls.incrementAndGet();
            return store.decide(caller, limits);
        }

        @Override
        public CompletionStage<Void> reset(String caller, List<Limit> limits) {
            return store.reset(caller, limits);
        }

        @Override
        public CompletionStage<Void> refund(String caller, List<Limit> limits) {
            return store.refund(caller, limits);
        }

        @Override
        public void close() {
            store.close();
        }
    }

    /** A store behind the cache that must be asked by key, never by caller; it records the tags it is handed. */
    private final class ByKeyOnly implements RejectionCache.Keyed {
        final List<String> tags;

        ByKeyOnly(List<String> tags) {
            this.tags = tags;
        }

        @Override
        public CompletionStage<Decision> decide(String caller, List<Limit> limits) {
            throw new AssertionError("asked by caller, not by tag");
        }

        @Override
        public CompletionStage<Decision> decide(String caller, List<Limit> limits, long deadlineNanos, boolean fresh) {
            throw new AssertionError("asked by caller, not by tag");
        }

        @Override
        public CompletionStage<Void> refund(String caller, List<Limit> limits) {
            throw new AssertionError("refunded by caller, not by tag");
        }

        @Override
        public CompletionStage<Void> reset(String caller, List<Limit> limits) {
            throw new AssertionError("reset by caller, not by tag");
        }

        @Override
        public CompletionStage<Decision> decide(StorageKey key) {
            tags.add(key.tag);
            return store.decide(key.tag, key.limits);
        }

        @Override
        public CompletionStage<Decision> decide(StorageKey key, long deadlineNanos, boolean fresh) {
            tags.add(key.tag);
            return store.decide(key.tag, key.limits);
        }

        @Override
        public CompletionStage<Void> refund(StorageKey key) {
            tags.add(key.tag);
            return store.refund(key.tag, key.limits);
        }

        @Override
        public CompletionStage<Void> reset(StorageKey key) {
            tags.add(key.tag);
            return store.reset(key.tag, key.limits);
        }

        @Override
        public void close() {
        }
    }

    /** A store that answers with the future it is given, when the test completes it. */
    private record Holding(CompletableFuture<Decision> answer) implements RateLimitStore {
        @Override
        public CompletionStage<Decision> decide(String caller, List<Limit> limits) {
            return answer;
        }

        @Override
        public void close() {
        }
    }
}
