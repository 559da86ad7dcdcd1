package dev.sluice.redis;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.internal.Timeouts;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * One hot caller's slice: the requests Redis granted this instance and it has not granted yet,
 * and the calls that take, renew and give back such slices. Why and how big: see {@link HotKeys}.
 *
 * <p>Thread-safe: its state is guarded by this; no call is sent holding the lock.
 */
final class Slice {

    private static final long MIN_LIFETIME_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    final StorageKey key;
    /** Completes when the slice is dead, no call of it is in flight and what it held is given back. */
    final CompletableFuture<Void> retired = new CompletableFuture<>();
    private final Limit limit;
    private final String[] encoded;
    private final long lifetimeNanos;
    private final SliceScript script;
    private final HotKeys.Direct direct;
    private final int threshold;

    // guarded by this
    private final TwinBucket twin;
    private final ArrayDeque<CompletableFuture<Decision>> waiting = new ArrayDeque<>();
    private long left;
    private long used;
    /** Requests granted since the last look at whether the caller cooled down. */
    private long sinceCheck;
    private long want = 1;
    private long takenAt;
    private long expiresAt;
    private boolean calling;
    private boolean dead;
    private long generation;

    Slice(StorageKey key, SliceScript script, HotKeys.Direct direct, int threshold, TwinBucket twin) {
        this.key = key;
        this.limit = key.limits.get(0);
        this.encoded = DecideScript.encode(limit);
        this.script = script;
        this.direct = direct;
        this.threshold = threshold;
        this.twin = twin;
        this.lifetimeNanos = Math.max(MIN_LIFETIME_NANOS,
                Math.min(HotKeys.MAX_LIFETIME_NANOS, TimeUnit.MICROSECONDS.toNanos(limit.periodMicros()) / 10));
    }

    CompletionStage<Decision> decide(long deadlineNanos) {
        long give;
        long asked;
        CompletableFuture<Decision> answer;
        synchronized (this) {
            if (dead) {
                return retired.thenCompose(back -> direct.decide(key, deadlineNanos));
            }
            long now = System.nanoTime();
            if (left > 0 && now < expiresAt) {
                return CompletableFuture.completedFuture(grant());
            }
            answer = new CompletableFuture<>();
            waiting.add(answer);
            if (calling) {
                return answer;
            }
            calling = true;
            give = left;
            left = 0;
            asked = nextWant(now);
        }
        call(give, asked);
        return answer;
    }

    /**
     * The next slice: the requests this instance granted per lifetime in the last slice (its
     * own rate; grown when the slice ran out early), with every waiting request, at least one
     * and at most the limit's capacity. Called holding the lock.
     */
    private long nextWant(long now) {
        if (takenAt != 0) {
            long elapsed = Math.max(1, now - takenAt);
            double perLifetime = (double) used * lifetimeNanos / Math.min(elapsed, lifetimeNanos);
            want = (long) Math.ceil(perLifetime);
        }
        long capacity = limit.capacity() / limit.cost();
        return Math.max(1, Math.min(capacity, want + waiting.size()));
    }

    private synchronized String[] handBack(long give) {
        return twin.handBack(give);
    }

    /** Sends a slice.lua call giving back {@code give} requests, asking for {@code asked}; {@code calling} is set. */
    private void call(long give, long asked) {
        script.call(key, encoded, give, asked, handBack(give))
                .whenComplete((reply, failure) -> settle(asked, reply, failure));
    }

    /** Takes a slice.lua reply: grants the waiting requests from the new slice, or refuses them. */
    private void settle(long asked, List<Object> reply, Throwable failure) {
        List<CompletableFuture<Decision>> granted = new ArrayList<>();
        List<Decision> grants = new ArrayList<>();
        List<CompletableFuture<Decision>> refused = new ArrayList<>();
        List<CompletableFuture<Decision>> decidedDirectly = new ArrayList<>();
        Decision rejection = null;
        Throwable failed = null;
        long nextAsk = -1;
        long giveBack = -1;
        synchronized (this) {
            calling = false;
            if (failure != null) {
                // what was to be given back may or may not have been: it is not offered twice
                failed = DecideScript.failure(failure);
                refused.addAll(waiting);
                waiting.clear();
            } else if (DecideScript.number(reply, 0) == SliceScript.OTHER_UNITS) {
                dead = true;
                decidedDirectly.addAll(waiting);
                waiting.clear();
            } else {
                long now = System.nanoTime();
                long got = DecideScript.number(reply, 0);
                left = got;
                if (asked > 0) {
                    // a give-back alone leaves the last slice's rate to size the next one
                    used = 0;
                    takenAt = now;
                    expiresAt = now + lifetimeNanos;
                }
                twin.taken(reply, got);
                long gen = ++generation;
                while (left > 0 && !waiting.isEmpty()) {
                    granted.add(waiting.poll());
                    grants.add(grant());
                }
                if (!waiting.isEmpty()) {
                    if (got == 0 && asked > 0) {
                        rejection = twin.rejected(reply);
                        refused.addAll(waiting);
                        waiting.clear();
                    } else if (dead) {
                        decidedDirectly.addAll(waiting);
                        waiting.clear();
                    } else {
                        // Redis may hold more (a slice is at most a share of it): another call
                        // for the requests that came meanwhile; refused only when none fits
                        calling = true;
                        nextAsk = nextWant(now);
                    }
                }
                if (!calling && !dead) {
                    expireLater(gen);
                }
            }
            if (dead && !calling) {
                giveBack = left;
                left = 0;
            }
        }
        for (int i = 0; i < granted.size(); i++) {
            granted.get(i).complete(grants.get(i));
        }
        for (CompletableFuture<Decision> f : refused) {
            if (failed != null) {
                f.completeExceptionally(failed);
            } else {
                f.complete(rejection);
            }
        }
        if (giveBack >= 0) {
            giveBack(giveBack).whenComplete((x, e) -> retired.complete(null));
        }
        for (CompletableFuture<Decision> f : decidedDirectly) {
            retired.thenCompose(back -> direct.decide(key, System.nanoTime() + TimeUnit.SECONDS.toNanos(1)))
                    .whenComplete((d, e) -> {
                        if (e != null) {
                            f.completeExceptionally(DecideScript.unwrap(e));
                        } else {
                            f.complete(d);
                        }
                    });
        }
        if (nextAsk >= 0) {
            call(0, nextAsk);
        }
    }

    /** When slice {@code gen} expires, gives back what is left of it unless a later call has done so. */
    private void expireLater(long gen) {
        Timeouts.orTimeout(new CompletableFuture<Void>(), lifetimeNanos)
                .whenComplete((nothing, elapsed) -> expire(gen));
    }

    /**
     * A slice's lifetime after its call: what is left of it is given back, and the slice dropped
     * if its caller has cooled (see {@link HotKeys}), else looked at again after another lifetime.
     */
    private void expire(long gen) {
        long give;
        boolean cooled;
        synchronized (this) {
            if (gen != generation || calling || dead) {
                return;
            }
            long rate = sinceCheck * TimeUnit.SECONDS.toNanos(1) / lifetimeNanos;
            sinceCheck = 0;
            cooled = rate * 2 < threshold;
            give = left;
            left = 0;
            if (cooled) {
                dead = true;
            } else if (give > 0) {
                calling = true;
            }
        }
        if (cooled) {
            giveBack(give).whenComplete((x, e) -> retired.complete(null));
        } else if (give > 0) {
            call(give, 0);
        } else {
            expireLater(gen);
        }
    }

    /**
     * Gives back what the slice holds, for good, now or (a call in flight) when its reply
     * comes; completes when it is given back.
     */
    CompletableFuture<Void> close() {
        long give;
        synchronized (this) {
            if (dead) {
                return retired;
            }
            dead = true;
            if (calling) {
                return retired;
            }
            give = left;
            left = 0;
        }
        giveBack(give).whenComplete((x, e) -> retired.complete(null));
        return retired;
    }

    /** A slice.lua call only giving back {@code give} requests, outside the slice's turn. */
    private CompletableFuture<Void> giveBack(long give) {
        String[] back = handBack(give);
        if (back[0].isEmpty() && give == 0) {
            return CompletableFuture.completedFuture(null);
        }
        return script.call(key, encoded, give, 0, back).handle((reply, failure) -> null);
    }

    /** Grants one request of the slice; called holding the lock, {@code left} positive. */
    private Decision grant() {
        left--;
        used++;
        sinceCheck++;
        return twin.grant();
    }
}
