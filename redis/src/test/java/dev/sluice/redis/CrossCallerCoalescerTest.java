package dev.sluice.redis;

import dev.sluice.Decision;
import dev.sluice.Limit;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Batching across callers on its own, with calls the test answers by hand: different callers
 * waiting at the same moment share a call, nothing waits while a slot is free, a request that
 * cannot wait goes at once, a batch's or a call's failure stays its own, a batch's answer does not
 * wait for the rest of its call, nothing waits behind a late call, and nothing stays behind.
 */
class CrossCallerCoalescerTest {

    private static final List<Limit> LIMITS = List.of(Limit.of("x", "5/1s"));
    private static final long LATER = System.nanoTime() + TimeUnit.HOURS.toNanos(1);

    /**
     * The calls sent, each as the batches it decides, with one reply per batch the test completes;
     * a call a late one gave its slot to is sent on the timer's thread.
     */
    private final List<List<Batch>> calls = new CopyOnWriteArrayList<>();
    private final List<List<CompletableFuture<IntFunction<Decision>>>> replies = new CopyOnWriteArrayList<>();
    /** Completed with the number of calls sent, whenever one is. */
    private volatile CompletableFuture<Integer> sent = new CompletableFuture<>();

    private Coalescer coalescer(int slots) {
        return coalescer(slots, Coalescer.NEVER_LATE);
    }

    private Coalescer coalescer(int slots, long lateNanos) {
        return new Coalescer(batches -> {
            List<CompletableFuture<IntFunction<Decision>>> reply = new ArrayList<>();
            batches.forEach(batch -> reply.add(new CompletableFuture<>()));
            replies.add(reply);
            calls.add(batches);
            sent.complete(calls.size());
            return reply;
        }, slots, true, lateNanos);
    }

    private static StorageKey caller(int i) {
        return new StorageKey("caller-" + i, LIMITS);
    }

    /** Request {@code i} of a batch learns its place: {@code i} remaining. */
    private static IntFunction<Decision> places() {
        return i -> new Decision(Decision.Outcome.ALLOWED,
                List.of(new Decision.Quota(LIMITS.get(0), true, i, Duration.ZERO, Duration.ZERO)), Duration.ZERO);
    }

    private void answer(int call) {
        replies.get(call).forEach(reply -> reply.complete(places()));
    }

    private List<String> tags(int call) {
        return calls.get(call).stream().map(batch -> batch.key().tag + "x" + batch.size()).toList();
    }

    @Test
    void callersWaitingAtTheSameMomentGoTogetherInTheNextCallEachInItsOwnBatch() {
        Coalescer coalescer = coalescer(1);
        CompletableFuture<Decision> first = coalescer.decide(caller(0), LATER);
        List<CompletableFuture<Decision>> waiting = new ArrayList<>();
        for (int round = 0; round < 2; round++) {
            for (int c = 1; c <= 3; c++) {
                waiting.add(coalescer.decide(caller(c), LATER));
            }
        }
        assertThat(calls).hasSize(1);
        answer(0);
        assertThat(first.join().remaining()).isZero();
        assertThat(tags(1)).as("one call, a batch per caller in arrival order")
                .containsExactly("caller-1x2", "caller-2x2", "caller-3x2");
        answer(1);
        assertThat(waiting).extracting(answer -> answer.join().remaining()).containsExactly(0L, 0L, 0L, 1L, 1L, 1L);
        assertThat(coalescer.inFlight()).isZero();
    }

    @Test
    void withAFreeSlotNothingWaits() {
        Coalescer coalescer = coalescer(2);
        coalescer.decide(caller(1), LATER);
        coalescer.decide(caller(2), LATER);
        assertThat(calls).as("two slots: two calls at once").hasSize(2);
        coalescer.decide(caller(3), LATER);
        coalescer.decide(caller(4), LATER);
        assertThat(calls).hasSize(2);
        answer(1);
        assertThat(tags(2)).containsExactly("caller-3x1", "caller-4x1");
        answer(0);
        answer(2);
        assertThat(coalescer.inFlight()).isZero();
        for (int i = 0; i < 5; i++) {
            coalescer.decide(caller(i), LATER);
            answer(calls.size() - 1);
        }
        assertThat(calls).as("one at a time: each its own call").hasSize(8);
        assertThat(coalescer.inFlight()).isZero();
    }

    @Test
    void aRequestThatCannotWaitGoesAtOnceAndItsCallServesTheQueueWhenBack() {
        Coalescer coalescer = coalescer(1);
        coalescer.decide(caller(1), LATER);
        CompletableFuture<Decision> hurried = coalescer.decide(caller(2), System.nanoTime() - 1);
        CompletableFuture<Decision> patient = coalescer.decide(caller(3), LATER);
        assertThat(calls).as("the hurried one beside the call in flight").hasSize(2);
        assertThat(tags(1)).containsExactly("caller-2x1");
        answer(1);
        assertThat(hurried).isCompleted();
        assertThat(tags(2)).as("the patient one went when the hurried call was back").containsExactly("caller-3x1");
        answer(2);
        answer(0);
        assertThat(patient).isCompleted();
        assertThat(coalescer.inFlight()).isZero();
    }

    @Test
    void aBatchThatFailsFailsOnlyItsOwnRequests() {
        Coalescer coalescer = coalescer(1);
        coalescer.decide(caller(0), LATER);
        CompletableFuture<Decision> a = coalescer.decide(caller(1), LATER);
        CompletableFuture<Decision> b1 = coalescer.decide(caller(2), LATER);
        CompletableFuture<Decision> b2 = coalescer.decide(caller(2), LATER);
        CompletableFuture<Decision> c = coalescer.decide(caller(3), LATER);
        answer(0);
        replies.get(1).get(0).complete(places());
        replies.get(1).get(1).completeExceptionally(new IllegalStateException("WRONGTYPE"));
        replies.get(1).get(2).complete(places());
        assertThat(a.join().allowed()).isTrue();
        assertThat(c.join().allowed()).isTrue();
        assertThatThrownBy(b1::join).hasMessageContaining("WRONGTYPE");
        assertThatThrownBy(b2::join).hasMessageContaining("WRONGTYPE");
        assertThat(coalescer.inFlight()).isZero();
    }

    /**
     * On a cluster a call's batches go to several masters; the batches of a fast one used to wait
     * for the slowest one's reply before they were answered.
     */
    @Test
    void aBatchIsAnsweredByItsOwnReplyWhileTheRestOfItsCallIsOut() {
        Coalescer coalescer = coalescer(1);
        coalescer.decide(caller(0), LATER);
        CompletableFuture<Decision> slow = coalescer.decide(caller(1), LATER);
        CompletableFuture<Decision> fast = coalescer.decide(caller(2), LATER);
        answer(0);
        assertThat(tags(1)).containsExactly("caller-1x1", "caller-2x1");
        replies.get(1).get(1).complete(places());
        assertThat(fast).as("answered by its own reply").isCompleted();
        assertThat(slow).isNotDone();
        CompletableFuture<Decision> next = coalescer.decide(caller(3), LATER);
        assertThat(calls).as("the call keeps its slot until its last reply is in").hasSize(2);
        replies.get(1).get(0).complete(places());
        assertThat(slow.join().allowed()).isTrue();
        assertThat(tags(2)).containsExactly("caller-3x1");
        answer(2);
        assertThat(next.join().allowed()).isTrue();
        assertThat(coalescer.inFlight()).isZero();
    }

    /**
     * One master stalled (a slot on the move, a node not scheduled) used to hold every waiting
     * request behind the call that reached it, until that call was back: they all missed their
     * deadlines together although the other masters answered at once.
     */
    @Test
    void requestsWaitingBehindALateCallGoBesideItInTheSlotItGivesUp() throws Exception {
        long late = TimeUnit.MILLISECONDS.toNanos(20);
        Coalescer coalescer = coalescer(1, late);
        long stalledSince = System.nanoTime();
        CompletableFuture<Decision> stalled = coalescer.decide(caller(0), LATER);
        sent = new CompletableFuture<>();
        CompletableFuture<Decision> first = coalescer.decide(caller(1), LATER);
        CompletableFuture<Decision> second = coalescer.decide(caller(2), LATER);
        assertThat(sent.get(10, TimeUnit.SECONDS)).as("a call beside the late one").isEqualTo(2);
        assertThat(System.nanoTime() - stalledSince).as("not before the call was late").isGreaterThanOrEqualTo(late);
        assertThat(tags(1)).containsExactly("caller-1x1", "caller-2x1");
        answer(1);
        assertThat(first.join().allowed()).isTrue();
        assertThat(second.join().allowed()).isTrue();
        assertThat(stalled).isNotDone();
        assertThat(coalescer.inFlight()).as("the late call holds no slot").isZero();
        answer(0);
        assertThat(stalled.join().allowed()).isTrue();
        assertThat(calls).as("the late call, back, sends nothing more").hasSize(2);
        assertThat(coalescer.inFlight()).isZero();
    }

    @Test
    void aCallThatFailsFailsOnlyTheRequestsInIt() {
        Coalescer coalescer = coalescer(1);
        CompletableFuture<Decision> inFlight = coalescer.decide(caller(1), LATER);
        CompletableFuture<Decision> hurried = coalescer.decide(caller(2), System.nanoTime() - 1);
        CompletableFuture<Decision> waiting = coalescer.decide(caller(3), LATER);
        replies.get(1).forEach(reply -> reply.completeExceptionally(new IllegalStateException("timed out")));
        assertThatThrownBy(hurried::join).hasMessageContaining("timed out");
        assertThat(inFlight).isNotDone();
        answer(0);
        answer(2);
        assertThat(inFlight.join().allowed()).isTrue();
        assertThat(waiting.join().allowed()).isTrue();
        assertThat(coalescer.inFlight()).isZero();
    }

    @Test
    void aCallHoldsAtMostMaxBatchesCallersAndMaxRequestsRequests() {
        Coalescer coalescer = coalescer(1);
        coalescer.decide(caller(-1), LATER);
        for (int c = 0; c < Coalescer.MAX_BATCHES + 10; c++) {
            coalescer.decide(caller(c), LATER);
        }
        answer(0);
        assertThat(calls.get(1)).hasSize(Coalescer.MAX_BATCHES);
        answer(1);
        assertThat(calls.get(2)).hasSize(10);
        answer(2);
        // five hot callers of 256 each (the first request goes at once): a call holds at most 1024
        for (int c = 0; c < 5; c++) {
            for (int r = 0; r < Coalescer.MAX_BATCH; r++) {
                coalescer.decide(caller(100 + c), LATER);
            }
        }
        int call = calls.size() - 1;
        answer(call);
        assertThat(calls.get(call + 1)).extracting(Batch::size).containsExactly(255, 256, 256, 256);
        answer(call + 1);
        assertThat(calls.get(call + 2)).extracting(Batch::size).containsExactly(256);
        answer(call + 2);
        assertThat(coalescer.inFlight()).isZero();
    }

    @Test
    void callersWhoGaveUpAreNotSentAndAnEmptiedCallLeavesNothingBehind() {
        Coalescer coalescer = coalescer(1);
        coalescer.decide(caller(0), LATER);
        CompletableFuture<Decision> gone = coalescer.decide(caller(1), LATER);
        CompletableFuture<Decision> stays = coalescer.decide(caller(2), LATER);
        gone.cancel(false);
        answer(0);
        assertThat(tags(1)).containsExactly("caller-2x1");
        coalescer.decide(caller(3), LATER).cancel(false);
        coalescer.decide(caller(4), LATER).cancel(false);
        answer(1);
        assertThat(stays.join().allowed()).isTrue();
        assertThat(calls).as("a turn whose callers all gave up is not sent").hasSize(2);
        assertThat(coalescer.inFlight()).isZero();
        CompletableFuture<Decision> again = coalescer.decide(caller(0), LATER);
        assertThat(calls).as("the slot was given back").hasSize(3);
        answer(2);
        assertThat(again.join().allowed()).isTrue();
        assertThat(coalescer.inFlight()).isZero();
    }
}
