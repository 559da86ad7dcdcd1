package dev.sluice.redis;

import dev.sluice.Decision;
import dev.sluice.Limit;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntFunction;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The coalescing of one caller's concurrent requests on its own, with calls the test answers by
 * hand: who waits, who goes at once, who is not sent, and that no batch stays behind.
 */
class CoalescerTest {

    private static final StorageKey KEY = new StorageKey("caller", List.of(Limit.of("c", "5/1s")));
    private static final long LATER = System.nanoTime() + TimeUnit.HOURS.toNanos(1);

    /** The calls sent, each with how many requests it decides, answered when the test says. */
    private final List<Integer> sizes = new ArrayList<>();
    private final List<CompletableFuture<IntFunction<Decision>>> replies = new ArrayList<>();
    private final Coalescer coalescer = new Coalescer((key, requests) -> {
        sizes.add(requests);
        CompletableFuture<IntFunction<Decision>> reply = new CompletableFuture<>();
        replies.add(reply);
        return reply;
    }, true);

    /** Request {@code i} of a reply learns its place: {@code i} remaining. */
    private static IntFunction<Decision> places() {
        return i -> new Decision(Decision.Outcome.ALLOWED,
                List.of(new Decision.Quota(KEY.limits.get(0), true, i, Duration.ZERO, Duration.ZERO)), Duration.ZERO);
    }

    @Test
    void requestsArrivingWhileACallIsInFlightGoTogetherInOneCallInArrivalOrder() {
        CompletableFuture<Decision> first = coalescer.decide(KEY, LATER);
        List<CompletableFuture<Decision>> waiting = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            waiting.add(coalescer.decide(KEY, LATER));
        }
        assertThat(sizes).containsExactly(1);
        replies.get(0).complete(places());
        assertThat(first.join().remaining()).isZero();
        assertThat(sizes).containsExactly(1, 3);
        replies.get(1).complete(places());
        assertThat(waiting).extracting(answer -> answer.join().remaining()).containsExactly(0L, 1L, 2L);
        assertThat(coalescer.inFlight()).isZero();
    }

    @Test
    void aRequestThatCannotWaitGoesAtOnceAndLaterOnesWaitForIt() {
        CompletableFuture<Decision> first = coalescer.decide(KEY, LATER);
        CompletableFuture<Decision> hurried = coalescer.decide(KEY, System.nanoTime() - 1);
        CompletableFuture<Decision> after = coalescer.decide(KEY, LATER);
        assertThat(sizes).as("the hurried one beside the call in flight").containsExactly(1, 1);
        replies.get(1).complete(places());
        assertThat(hurried).isCompleted();
        assertThat(sizes).as("the later one waited for the hurried call").containsExactly(1, 1, 1);
        replies.get(0).complete(places());
        replies.get(2).complete(places());
        assertThat(first).isCompleted();
        assertThat(after).isCompleted();
        assertThat(coalescer.inFlight()).isZero();
    }

    @Test
    void aRequestWhoseCallerGaveUpBeforeItsTurnIsNotSent() {
        coalescer.decide(KEY, LATER);
        CompletableFuture<Decision> gaveUp = coalescer.decide(KEY, LATER);
        CompletableFuture<Decision> stays = coalescer.decide(KEY, LATER);
        gaveUp.completeExceptionally(new TimeoutException());
        replies.get(0).complete(places());
        assertThat(sizes).containsExactly(1, 1);
        replies.get(1).complete(places());
        assertThat(stays.join().remaining()).isZero();
        assertThat(coalescer.inFlight()).isZero();
    }

    @Test
    void aFailedOrUnreadableReplyAnswersEveryRequestAndLeavesNoBatchBehind() {
        coalescer.decide(KEY, LATER);
        CompletableFuture<Decision> a = coalescer.decide(KEY, LATER);
        CompletableFuture<Decision> b = coalescer.decide(KEY, LATER);
        IllegalStateException down = new IllegalStateException("down");
        replies.get(0).completeExceptionally(down);
        replies.get(1).complete(i -> {
            throw new IllegalStateException("unreadable reply from decide.lua: " + i);
        });
        assertThatThrownBy(a::join).hasCauseInstanceOf(IllegalStateException.class).hasMessageContaining("unreadable");
        assertThatThrownBy(b::join).hasMessageContaining("unreadable reply from decide.lua: 1");
        assertThat(coalescer.inFlight()).isZero();
    }

    @Test
    void noMoreThanMaxBatchRequestsGoInOneCall() {
        coalescer.decide(KEY, LATER);
        for (int i = 0; i < Coalescer.MAX_BATCH + 10; i++) {
            coalescer.decide(KEY, LATER);
        }
        replies.get(0).complete(places());
        replies.get(1).complete(places());
        replies.get(2).complete(places());
        assertThat(sizes).containsExactly(1, Coalescer.MAX_BATCH, 10);
        assertThat(coalescer.inFlight()).isZero();
    }
}
