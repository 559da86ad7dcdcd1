package dev.sluice.redis;

import dev.sluice.Decision;
import dev.sluice.Limit;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntFunction;

/**
 * Sends one caller's concurrent requests with one set of limits together: while a call is in
 * flight, the requests that arrive wait and are then sent in one call, in arrival order, each
 * getting its own decision. A request waits only while the call in flight and then its own can
 * both come back before its deadline, judged by the recent round trips; otherwise it is sent at
 * once, beside the call in flight, and the requests after it wait for it instead.
 *
 * <p>Nothing here leaves an answer incomplete or a batch registered: every request gets a
 * decision or a failure, and a batch leaves {@link #inFlight} when its last turn is answered. An
 * answer completed before its turn (its caller gave up) is not sent, so it is not charged.
 */
final class Coalescer {

    /** The most requests one coalesced call decides. */
    static final int MAX_BATCH = 256;

    /** Sends one call deciding {@code requests} requests of one key. */
    @FunctionalInterface
    interface Call {
        /** The reply: the decision of request {@code i}, in arrival order. */
        CompletableFuture<IntFunction<Decision>> send(RequestKey key, int requests);
    }

    private final Call call;
    private final boolean enabled;
    private final ConcurrentHashMap<RequestKey, Batch> inFlight = new ConcurrentHashMap<>();
    private final RoundTrips roundTrips = new RoundTrips();

    /** @param enabled whether to coalesce; if not, every request is one call of its own */
    Coalescer(Call call, boolean enabled) {
        this.call = call;
        this.enabled = enabled;
    }

    /** Decides one request of {@code key}, sent alone or with others, answered by {@code deadlineNanos} if it can be. */
    CompletableFuture<Decision> decide(RequestKey key, long deadlineNanos) {
        CompletableFuture<Decision> answer = new CompletableFuture<>();
        if (!enabled) {
            send(key, List.of(answer), null);
            return answer;
        }
        while (true) {
            Batch current = inFlight.get(key);
            if (current == null) {
                Batch mine = new Batch();
                if (inFlight.putIfAbsent(key, mine) == null) {
                    send(key, List.of(answer), mine);
                    return answer;
                }
                continue;
            }
            synchronized (current) {
                if (current.closed) {
                    continue;
                }
                if (current.answersInTime(deadlineNanos, roundTrips.likelyNanos())) {
                    current.waiting.add(answer);
                    return answer;
                }
            }
            // Waiting would miss the deadline: go now, and be the call that later arrivals wait for.
            Batch mine = new Batch();
            if (inFlight.replace(key, current, mine)) {
                send(key, List.of(answer), mine);
                return answer;
            }
        }
    }

    /** How many keys have a coalesced call in flight (for tests: none stays behind). */
    int inFlight() {
        return inFlight.size();
    }

    private void send(RequestKey key, List<CompletableFuture<Decision>> answers, Batch batch) {
        List<CompletableFuture<Decision>> live = new ArrayList<>(answers.size());
        for (CompletableFuture<Decision> answer : answers) {
            if (!answer.isDone()) {
                live.add(answer);
            }
        }
        if (live.isEmpty()) {
            next(key, batch);
            return;
        }
        long sentNanos = System.nanoTime();
        if (batch != null) {
            synchronized (batch) {
                batch.sentNanos = sentNanos;
            }
        }
        CompletableFuture<IntFunction<Decision>> reply;
        try {
            reply = call.send(key, live.size());
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        // Nothing in here may leave an answer incomplete or the batch registered: every request of
        // this turn gets a decision or a failure, and the next turn always runs.
        reply.whenComplete((decisions, failure) -> {
            try {
                roundTrips.add(System.nanoTime() - sentNanos);
                for (int r = 0; r < live.size(); r++) {
                    CompletableFuture<Decision> answer = live.get(r);
                    try {
                        if (failure != null) {
                            answer.completeExceptionally(DecideScript.unwrap(failure));
                        } else {
                            answer.complete(decisions.apply(r));
                        }
                    } catch (RuntimeException e) {
                        answer.completeExceptionally(e);
                    }
                }
            } finally {
                next(key, batch);
            }
        });
    }

    /** Sends the next turn of a batch's waiting requests, or retires the batch if none wait. */
    private void next(RequestKey key, Batch batch) {
        if (batch == null) {
            return;
        }
        List<CompletableFuture<Decision>> turn;
        synchronized (batch) {
            if (batch.waiting.isEmpty()) {
                batch.closed = true;
                inFlight.remove(key, batch);
                return;
            }
            int n = Math.min(MAX_BATCH, batch.waiting.size());
            turn = new ArrayList<>(batch.waiting.subList(0, n));
            batch.waiting.subList(0, n).clear();
        }
        send(key, turn, batch);
    }

    /** One caller's requests with one set of limits: the unit of coalescing. */
    static final class RequestKey {
        final String tag;
        final List<Limit> limits;
        // Looked up several times per decision; the limits' hash is worth computing once.
        private final int hash;

        RequestKey(String tag, List<Limit> limits) {
            this.tag = tag;
            this.limits = limits;
            this.hash = 31 * tag.hashCode() + limits.hashCode();
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof RequestKey key && hash == key.hash && tag.equals(key.tag) && limits.equals(key.limits);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }

    /**
     * How long a call takes, as TCP estimates a round trip (RFC 6298): a smoothed mean plus four
     * mean deviations, so that a wait judged to fit does fit despite the usual jitter.
     */
    private static final class RoundTrips {
        private long smoothed;
        private long deviation;
        private volatile long likely;

        synchronized void add(long nanos) {
            if (likely == 0) {
                smoothed = nanos;
                deviation = nanos / 2;
            } else {
                deviation += (Math.abs(smoothed - nanos) - deviation) / 4;
                smoothed += (nanos - smoothed) / 8;
            }
            likely = smoothed + 4 * deviation;
        }

        long likelyNanos() {
            return likely;
        }
    }

    /** The requests waiting while a call for their key is in flight. Guarded by itself. */
    private static final class Batch {
        final List<CompletableFuture<Decision>> waiting = new ArrayList<>();
        boolean closed;
        /** When the call in flight was sent. */
        long sentNanos = System.nanoTime();

        /** Whether a request waiting for the call in flight, then sent, would be answered by its deadline. */
        boolean answersInTime(long deadlineNanos, long latencyNanos) {
            long inFlightAnswered = Math.max(System.nanoTime(), sentNanos + latencyNanos);
            return deadlineNanos - (inFlightAnswered + latencyNanos) >= 0;
        }
    }
}
