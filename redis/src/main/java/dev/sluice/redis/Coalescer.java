package dev.sluice.redis;

import dev.sluice.Decision;
import dev.sluice.internal.Timeouts;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

/**
 * Sends a store's decisions to Redis in as few calls as keeping each request on time allows.
 *
 * <h2>Design</h2>
 *
 * <p><b>Batching without a timer.</b> A request that finds fewer than {@code slots} calls in flight
 * is sent at once, alone: a quiet store adds no latency, as a linger timer (Kafka's
 * {@code linger.ms}) would. Only while every slot is busy do requests wait, and the call that comes
 * back hands its slot to them: the next call carries everything that arrived during the last round
 * trip. A batch's size so follows the load times the round trip, as a database's group commit does,
 * and Redis is sent at most {@code slots} calls at a time (one script call to a single master,
 * two pipelines to a cluster) unless a deadline asks for another.
 *
 * <p><b>A queue of batches and an index of the open ones.</b> Waiting requests sit in a FIFO of
 * batches; a map from {@link StorageKey} (hash tag and limits) to that key's newest batch lets a
 * request join its caller's batch in O(1). A batch is one caller's identical requests, which the
 * script decides one after another in arrival order, each with its own decision: a hot caller
 * costs one batch, not a call per request, and callers are served in the order they first came.
 * {@link #MAX_BATCH} bounds a batch, and {@link #MAX_BATCHES} and {@link #MAX_REQUESTS} a call, so
 * that no script holds Redis long; how one call's batches reach Redis (one script, or a pipeline on
 * a cluster) is the {@link Calls}' business.
 *
 * <p><b>Waiting only when it is on time.</b> A request waits only while the earliest call in
 * flight, the full calls queued before it and then its own can all come back before its deadline,
 * judged by the recent round trips ({@link RoundTrips}); otherwise it is sent at once, beside the
 * calls in flight, and its call's slot serves the queue when it is back. A slow Redis thus decides
 * a hot caller's requests as a quiet caller's, at the price of more calls in flight exactly when
 * Redis is slow.
 *
 * <p><b>Not behind a late call, where its batches go to several masters.</b> On a cluster one call
 * carries callers of every master, and one master can be slow alone (a slot on the move, a node
 * that is not scheduled): the requests waiting for a slot are then mostly for the others. So
 * there, a call still out after twice the likely round trip (and at least {@code lateNanos}) is
 * late, and gives its slot to the queue at once: the waiting requests go beside it instead of
 * behind it. One timer, set only while requests wait, looks for late calls. On one master a late
 * call means a late Redis, which another call beside it would not help: there the deadline alone
 * decides.
 *
 * <p><b>What it trades.</b> One monitor guards the queue, the index and the slots together, taken
 * once per decision: held briefly, and simpler than keeping three structures consistent without
 * it. A batch shares its reply: each of its requests gets its own decision from it, or its failure,
 * as soon as that reply is in, whatever the call's other batches are waiting for. The next call is
 * sent when the last reply is in, before that reply's requests are answered, so Redis does not
 * wait on our callbacks. And a request that finds every slot busy waits out the rest of a round
 * trip before its own: the price of the calls saved, paid only under load and only while it is on
 * time.
 *
 * <p><b>What it keeps.</b> Every request gets a decision or a failure (its batch's own, or its
 * call's), and {@link #inFlight} is zero once every call is back and nothing waits. An answer
 * completed before its turn (its caller gave up) is not sent, so it is not charged.
 */
final class Coalescer {

    /** The most requests of one caller one batch decides. */
    static final int MAX_BATCH = 256;
    /** The most batches (callers) one call decides. */
    static final int MAX_BATCHES = 256;
    /** The most requests one call decides. */
    static final int MAX_REQUESTS = 1024;
    /** The shortest time after which a call to several masters is late; see the class comment. */
    static final long LATE_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /** A late time for a coalescer whose calls never give up their slot: every call goes to one master. */
    static final long NEVER_LATE = Long.MAX_VALUE;

    /** Sends one call deciding {@code requests} requests of one key (each batch a call of its own). */
    @FunctionalInterface
    interface Call {
        /** The reply: the decision of request {@code i}, in arrival order. */
        CompletableFuture<IntFunction<Decision>> send(StorageKey key, int requests);
    }

    /** Sends one call deciding several batches. */
    @FunctionalInterface
    interface Calls {
        /** One reply per batch, in order: the decision of its request {@code i}, or the batch's failure. */
        List<CompletableFuture<IntFunction<Decision>>> send(List<Batch> batches);
    }

    private final Calls calls;
    private final int slots;
    private final boolean enabled;
    private final long lateNanos;
    private final RoundTrips roundTrips = new RoundTrips();
    // Guarded by this: the batches waiting, oldest first; the last one of each key, while it has room;
    // the calls in flight; the number of requests waiting.
    private final ArrayDeque<Waiting> queue = new ArrayDeque<>();
    private final Map<StorageKey, Waiting> open = new HashMap<>();
    private final List<Flight> flights = new ArrayList<>();
    private int queued;
    /** Whether the timer looking for late calls is set (guarded by this). */
    private boolean watching;

    /**
     * Each batch a call of its own, one call in flight before requests wait, and no call late; see
     * {@link #Coalescer(Calls, int, boolean, long)}.
     */
    Coalescer(Call call, boolean enabled) {
        this(batches -> {
            List<CompletableFuture<IntFunction<Decision>>> replies = new ArrayList<>(batches.size());
            for (Batch batch : batches) {
                replies.add(call.send(batch.key(), batch.size()));
            }
            return replies;
        }, 1, enabled, NEVER_LATE);
    }

    /**
     * @param slots     how many calls may be in flight before requests wait
     * @param enabled   whether to batch at all; if not, every request is one call of its own, at once
     * @param lateNanos the shortest time after which a call in flight is late and gives its slot to
     *                  the queue ({@link #LATE_NANOS} where a call's batches go to several masters),
     *                  or {@link #NEVER_LATE}
     */
    Coalescer(Calls calls, int slots, boolean enabled, long lateNanos) {
        if (lateNanos <= 0) {
            throw new IllegalArgumentException("lateNanos must be positive, got " + lateNanos);
        }
        this.calls = calls;
        this.slots = slots;
        this.enabled = enabled;
        this.lateNanos = lateNanos;
    }

    /** Decides one request of {@code key}, alone or with others, answered by {@code deadlineNanos} if it can be. */
    CompletableFuture<Decision> decide(StorageKey key, long deadlineNanos) {
        CompletableFuture<Decision> answer = new CompletableFuture<>();
        Flight flight = null;
        if (enabled) {
            synchronized (this) {
                if (flights.size() >= slots && answersInTime(deadlineNanos)) {
                    enqueue(key, answer, deadlineNanos);
                    watchForLateCalls();
                    return answer;
                }
                // a free slot, or waiting would miss the deadline: go now
                flight = new Flight(System.nanoTime());
                flights.add(flight);
            }
        }
        Waiting alone = new Waiting(key);
        alone.add(answer, deadlineNanos);
        send(List.of(alone), flight);
        return answer;
    }

    /**
     * A round trip measured outside a call (the store's warm-up at start-up), counted as a call's:
     * the first requests are then judged like later ones, not as if Redis answered at once.
     */
    void learnRoundTrip(long nanos) {
        roundTrips.add(nanos);
    }

    /** Calls in flight plus batches waiting (for tests: none stays behind). */
    synchronized int inFlight() {
        return flights.size() + queue.size();
    }

    private void enqueue(StorageKey key, CompletableFuture<Decision> answer, long deadlineNanos) {
        Waiting waiting = open.get(key);
        if (waiting == null || waiting.answers.size() >= MAX_BATCH) {
            waiting = new Waiting(key);
            queue.addLast(waiting);
            open.put(key, waiting);
        }
        waiting.add(answer, deadlineNanos);
        queued++;
    }

    /**
     * Whether a request waiting now would be answered by its deadline: when the first call in
     * flight is back, after the full calls already waiting, its own call's round trip.
     */
    private boolean answersInTime(long deadlineNanos) {
        long latency = roundTrips.likelyNanos();
        long earliest = flights.get(0).sentNanos;
        for (Flight flight : flights) {
            if (flight.sentNanos - earliest < 0) {
                earliest = flight.sentNanos;
            }
        }
        long now = System.nanoTime();
        long firstBack = earliest + latency - now < 0 ? now : earliest + latency;
        long fullCallsAhead = Math.max(queued / MAX_REQUESTS, queue.size() / MAX_BATCHES);
        return deadlineNanos - (firstBack + (fullCallsAhead + 1) * latency) >= 0;
    }

    /**
     * A call is back: its slot takes the next waiting batches, or is given up if none wait; a late
     * call's slot was handed on already.
     */
    private synchronized List<Waiting> land(Flight flight) {
        if (flight.late) {
            return null;
        }
        if (queue.isEmpty()) {
            flights.remove(flight);
            return null;
        }
        flight.sentNanos = System.nanoTime();
        return take();
    }

    /** The next call's batches, oldest first, off the queue (guarded by this; the queue holds some). */
    private List<Waiting> take() {
        List<Waiting> next = new ArrayList<>(Math.min(queue.size(), MAX_BATCHES));
        int requests = 0;
        while (!queue.isEmpty() && next.size() < MAX_BATCHES
                && requests + queue.peekFirst().answers.size() <= MAX_REQUESTS) {
            Waiting waiting = queue.pollFirst();
            open.remove(waiting.key, waiting);
            queued -= waiting.answers.size();
            requests += waiting.answers.size();
            next.add(waiting);
        }
        return next;
    }

    /**
     * Sets the timer that looks for late calls, unless it is set or no call can be late (guarded
     * by this; requests wait, so calls are in flight): it fires when the earliest call in flight
     * becomes late.
     */
    private void watchForLateCalls() {
        if (watching || lateNanos == NEVER_LATE) {
            return;
        }
        long earliest = flights.get(0).sentNanos;
        for (Flight flight : flights) {
            if (flight.sentNanos - earliest < 0) {
                earliest = flight.sentNanos;
            }
        }
        watching = true;
        Timeouts.after(this::handOnLateSlots, Math.max(0, earliest + late() - System.nanoTime()));
    }

    /** How long a call may be out before it is late: twice the likely round trip, at least {@link #lateNanos}. */
    private long late() {
        long likely = roundTrips.likelyNanos();
        return likely > lateNanos / 2 ? 2 * likely : lateNanos;
    }

    /**
     * On the timer: every late call gives its slot to the queue, whose batches go at once in the
     * slots freed; the timer is set again while requests still wait. The late calls are answered
     * when they are back, as any other.
     */
    private void handOnLateSlots() {
        List<Flight> freed = new ArrayList<>();
        List<List<Waiting>> turns = new ArrayList<>();
        synchronized (this) {
            watching = false;
            long now = System.nanoTime();
            long late = late();
            for (Iterator<Flight> it = flights.iterator(); it.hasNext(); ) {
                Flight flight = it.next();
                if (now - flight.sentNanos - late >= 0) {
                    flight.late = true;
                    it.remove();
                }
            }
            while (flights.size() < slots && !queue.isEmpty()) {
                Flight flight = new Flight(now);
                flights.add(flight);
                freed.add(flight);
                turns.add(take());
            }
            if (!queue.isEmpty()) {
                watchForLateCalls();
            }
        }
        for (int i = 0; i < freed.size(); i++) {
            send(turns.get(i), freed.get(i));
        }
    }

    /** Sends one call of these batches in {@code flight}'s slot ({@code null}: not batching). */
    private void send(List<Waiting> turn, Flight flight) {
        while (turn != null) {
            List<Waiting> live = new ArrayList<>(turn.size());
            List<Batch> batches = new ArrayList<>(turn.size());
            for (Waiting waiting : turn) {
                // out of the queue, so no longer shared: an answer its caller gave up on is not sent
                waiting.answers.removeIf(CompletableFuture::isDone);
                if (!waiting.answers.isEmpty()) {
                    live.add(waiting);
                    batches.add(new Batch(waiting.key, waiting.answers.size(), waiting.deadlineNanos));
                }
            }
            if (live.isEmpty()) {
                turn = flight == null ? null : land(flight);
                continue;
            }
            long sentNanos = System.nanoTime();
            List<CompletableFuture<IntFunction<Decision>>> replies;
            try {
                replies = calls.send(batches);
                if (replies.size() != batches.size()) {
                    throw new IllegalStateException(replies.size() + " replies to " + batches.size() + " batches");
                }
            } catch (RuntimeException e) {
                replies = new ArrayList<>(batches.size());
                for (int b = 0; b < batches.size(); b++) {
                    replies.add(CompletableFuture.failedFuture(e));
                }
            }
            // Each batch is answered by its own reply: a batch of a slow master holds no other one.
            AtomicInteger out = new AtomicInteger(live.size());
            for (int b = 0; b < live.size(); b++) {
                List<CompletableFuture<Decision>> answers = live.get(b).answers;
                CompletableFuture<IntFunction<Decision>> reply = replies.get(b);
                reply.whenComplete((value, failure) -> {
                    try {
                        if (out.decrementAndGet() == 0) {
                            back(sentNanos, flight);
                        }
                    } finally {
                        answer(answers, reply);
                    }
                });
            }
            return;
        }
    }

    /** A call is back, its last reply in: the next call goes in its slot, if it still has one. */
    private void back(long sentNanos, Flight flight) {
        roundTrips.add(System.nanoTime() - sentNanos);
        List<Waiting> next = flight == null ? null : land(flight);
        if (next != null) {
            send(next, flight);
        }
    }

    private static void answer(List<CompletableFuture<Decision>> answers,
                               CompletableFuture<IntFunction<Decision>> reply) {
        IntFunction<Decision> decisions = null;
        Throwable failure = null;
        try {
            decisions = reply.join();
        } catch (CompletionException | CancellationException e) {
            failure = DecideScript.unwrap(e);
        }
        for (int r = 0; r < answers.size(); r++) {
            CompletableFuture<Decision> answer = answers.get(r);
            try {
                if (failure != null) {
                    answer.completeExceptionally(failure);
                } else {
                    answer.complete(decisions.apply(r));
                }
            } catch (RuntimeException e) {
                answer.completeExceptionally(e);
            }
        }
    }

    /** A slot's call in flight: when it was sent, whether it was late and gave up its slot (coalescer-guarded). */
    private static final class Flight {
        long sentNanos;
        boolean late;

        Flight(long sentNanos) {
            this.sentNanos = sentNanos;
        }
    }

    /**
     * One key's requests waiting for a call, in arrival order, and when the last of them stops
     * waiting; guarded by the coalescer while queued.
     */
    private static final class Waiting {
        final StorageKey key;
        final List<CompletableFuture<Decision>> answers = new ArrayList<>();
        long deadlineNanos;

        Waiting(StorageKey key) {
            this.key = key;
        }

        void add(CompletableFuture<Decision> answer, long deadline) {
            if (answers.isEmpty() || deadline - deadlineNanos > 0) {
                deadlineNanos = deadline;
            }
            answers.add(answer);
        }
    }
}
