package dev.sluice.spi.algorithm;

import dev.sluice.spi.CompiledLimit;

/**
 * One rate algorithm's arithmetic under one limit's parameters: every operation a store performs
 * on a caller's state (decide, refund, pause, reserve and give back), as pure functions of the
 * stored state and an instant. No clock inside: the store reads its own and passes it.
 *
 * <p>A state is a {@code long[]} laid out as the algorithm's class documents, index 0 being 0 only
 * while it is absent (an all-zero array of the algorithm's length is the absent state). A state
 * remembers the parameters it was written under, as the fingerprint stored with each Redis key:
 * read under a limit with other parameters (the policy was changed), it is converted on each read,
 * exactly as the Lua scripts convert it, until the next commit writes it anew.
 *
 * <p>Writes: a function that changes the state writes the next one to {@code into} and returns it.
 * {@code into} may be the state itself (every value is read before any is written; the memory store
 * does so under its per-caller lock), another array (a compare-and-swap store keeps the read one to
 * compare), or {@code null} for a new array; the state given is otherwise never written.
 *
 * <p>Immutable and thread-safe; the arrays are the caller's to guard.
 */
public abstract class RateAlgorithm {

    private final CompiledLimit limit;

    RateAlgorithm(CompiledLimit limit) {
        this.limit = limit;
    }

    /**
     * The arithmetic of {@code limit}'s algorithm under its parameters: the one place each rate
     * algorithm is registered.
     *
     * @throws IllegalArgumentException for {@code concurrency}, which is held as leases, not as a rate
     */
    public static RateAlgorithm of(CompiledLimit limit) {
        return switch (limit.algorithm()) {
            case TOKEN_BUCKET -> new TokenBucket(limit);
            case GCRA -> new Gcra(limit);
            case FIXED_WINDOW -> new FixedWindow(limit);
            case SLIDING_WINDOW -> new SlidingWindow(limit);
            case SLIDING_LOG -> new SlidingLog(limit);
            case CONCURRENCY -> throw new IllegalArgumentException("'algorithm' concurrency is held as leases, "
                    + "not as a rate state, got '" + limit + "'");
        };
    }

    /** The limit whose parameters this arithmetic works under. */
    public final CompiledLimit limit() {
        return limit;
    }

    /** A new absent state: a key never written. */
    public abstract long[] absent();

    /** Whether {@code state} is absent (never written); an expired one is the store's to tell. */
    public static boolean isAbsent(long[] state) {
        return state[0] == 0;
    }

    /**
     * Decides {@code cost} units at {@code now}: whether they fit, and with {@code into} given and
     * a fit, consumes them. Writes the outcome, after any consumption, to {@code out}.
     *
     * @param into where a commit writes (see the class comment); {@code null}: read only
     * @param out  the verdict; {@code null} only as {@link #fits} passes it, skipping the divisions
     *             the verdict needs (then the answer is {@code state} if the cost fits, else null)
     * @return the state after the decision: the array committed to ({@code into}, or a longer one a
     *         sliding log grew into), else {@code state}
     */
    public abstract long[] evaluate(long[] state, long now, long cost, long[] into, Verdict out);

    /** Whether {@code cost} units fit at {@code now}, and nothing more: the quick form of {@link #evaluate}. */
    public final boolean fits(long[] state, long now, long cost) {
        return evaluate(state, now, cost, null, null) != null;
    }

    /**
     * Gives back {@code cost} units spent under this limit's parameters at {@code now}, as the
     * refund script does: never beyond an absent state's budget, and nothing if the state was
     * written under other parameters or what it spent no longer counts (a window that has passed).
     *
     * @return the next state, or {@code state} itself when nothing changes
     */
    public abstract long[] refund(long[] state, long now, long cost, long[] into);

    /**
     * Holds the budget spent until {@code until} (a provider's pause; {@code until > now}), then
     * lets it come back at its own pace, as the pause script does: a bucket is empty at
     * {@code until} and refills from there; a window counts full every window that starts before
     * {@code until}; a log holds {@code count} entries leaving one by one from {@code until} on.
     * Never grants anything: a state already spent further ahead stays as it is. A bucket's
     * returned slots are dropped by a pause (a slot given up before its end must not be sent in it).
     *
     * @return the next state; it expires at {@link #expiresAt}
     */
    public abstract long[] pause(long[] state, long now, long until, long[] into);

    /** When a state this arithmetic wrote becomes equal to an absent one, in store microseconds. */
    public abstract long expiresAt(long[] state);

    /**
     * Whether a reservation may be booked ahead of now. A sliding log may not: entries stamped ahead
     * would trim ones that still count now, which a refund could not bring back, so it reserves only
     * what it has now.
     */
    public boolean reservesAhead() {
        return true;
    }

    /**
     * Where the state's schedule ends, written to {@code out[at]} and {@code out[at + 1]}, as the
     * give-back script compares it: a bucket's theoretical arrival time and remainder, a window's
     * index, a log's newest entry (then 0). Read right after a reservation's commit.
     */
    public abstract void end(long[] state, long[] out, int at);

    /**
     * Returns a reservation of {@code cost} units given up by its waiter at {@code now}, which left
     * the schedule ending at {@code end} and {@code endRem} (see {@link #end}; an {@code endRem} of
     * -1: it took a returned slot), as the give-back script does: a bucket moves its schedule's end
     * back while it still ends there, a window takes it off the count while it still counts the
     * reservation's window, a log while its newest entry is the reservation's. Never under other
     * parameters.
     *
     * @return the next state, or {@code null} when it stays as it is; a bucket then keeps the
     *         slot for a later reservation: see {@link #returnSlot}
     */
    public abstract long[] giveBack(long[] state, long now, long cost, long end, long endRem, long[] into);

    /**
     * A bucket's {@code slots} with the reservation of {@code cost} at {@code slot} added, given up
     * at {@code now} when {@link #giveBack} left the state as it is: kept while the slot is still
     * ahead and inside the schedule. Other algorithms keep no slots: {@code slots} as it is.
     */
    public ReturnedSlots returnSlot(long[] state, ReturnedSlots slots, long now, long cost, long slot) {
        return slots;
    }

    /**
     * Whether a reservation of {@code cost} may take a slot of {@code slots} given up at
     * {@code instant}: a bucket written under this limit's units holding at least {@code cost}
     * tokens returned there, that instant still inside its schedule. Only buckets return slots.
     */
    public boolean canTake(long[] state, ReturnedSlots slots, long instant, long cost) {
        return false;
    }

    /**
     * Takes {@code cost} tokens of the slot returned at {@code instant} (see {@link #canTake}): a
     * slot the schedule granted already, so the state stays; {@code out} says what the state says
     * at {@code instant}, allowed.
     *
     * @return the slots left
     */
    public ReturnedSlots take(long[] state, ReturnedSlots slots, long instant, long cost, Verdict out) {
        throw new IllegalStateException("only a bucket returns slots, not " + limit);
    }
}
