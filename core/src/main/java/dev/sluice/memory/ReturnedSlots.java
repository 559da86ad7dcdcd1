package dev.sluice.memory;

import java.util.Arrays;

/**
 * The slots of a token bucket or GCRA whose waiters gave them up while reservations were booked
 * behind them (the Java twin of a bucket's {@code :slots} key, written by {@code giveback.lua},
 * taken by {@code decide.lua}'s reservation form): instants, in store microseconds, each with the
 * tokens given up there, ascending, at most {@link #MOST}. A new reservation takes the earliest
 * one still ahead before it extends the schedule: the call goes at an instant the schedule had
 * already granted, so no two calls come closer than the limit allows.
 *
 * <p>They remember the units they were written under: a limit with other parameters reads none.
 * Not thread-safe: its bucket's caller lock guards it.
 */
final class ReturnedSlots {

    /** The most slots a bucket keeps; a further one, later than all of them, passes unused. */
    static final int MOST = 32;

    final long perToken;
    final long perMicro;
    final long capacity;
    private long[] at = new long[4];
    private long[] tokens = new long[4];
    private int size;

    ReturnedSlots(long perToken, long perMicro, long capacity) {
        this.perToken = perToken;
        this.perMicro = perMicro;
        this.capacity = capacity;
    }

    ReturnedSlots copy() {
        ReturnedSlots copy = new ReturnedSlots(perToken, perMicro, capacity);
        copy.at = at.clone();
        copy.tokens = tokens.clone();
        copy.size = size;
        return copy;
    }

    boolean sameUnits(long perToken, long perMicro, long capacity) {
        return this.perToken == perToken && this.perMicro == perMicro && this.capacity == capacity;
    }

    int size() {
        return size;
    }

    long at(int i) {
        return at[i];
    }

    /** The tokens given up at {@code instant}; 0 if none. */
    long tokensAt(long instant) {
        int i = Arrays.binarySearch(at, 0, size, instant);
        return i < 0 ? 0 : tokens[i];
    }

    /** Takes {@code cost} of the tokens at {@code instant} (at least that many are there). */
    void take(long instant, long cost) {
        int i = Arrays.binarySearch(at, 0, size, instant);
        tokens[i] -= cost;
        if (tokens[i] == 0) {
            remove(i);
        }
    }

    /**
     * Adds {@code cost} tokens at {@code instant}, after dropping the slots before {@code now}
     * (nobody can use them); beyond {@link #MOST}, the latest slot goes.
     */
    void add(long now, long instant, long cost) {
        while (size > 0 && at[0] < now) {
            remove(0);
        }
        int i = Arrays.binarySearch(at, 0, size, instant);
        if (i >= 0) {
            tokens[i] += cost;
            return;
        }
        int insert = -i - 1;
        if (size == at.length) {
            at = Arrays.copyOf(at, size * 2);
            tokens = Arrays.copyOf(tokens, size * 2);
        }
        System.arraycopy(at, insert, at, insert + 1, size - insert);
        System.arraycopy(tokens, insert, tokens, insert + 1, size - insert);
        at[insert] = instant;
        tokens[insert] = cost;
        size++;
        if (size > MOST) {
            size = MOST;
        }
    }

    private void remove(int i) {
        System.arraycopy(at, i + 1, at, i, size - i - 1);
        System.arraycopy(tokens, i + 1, tokens, i, size - i - 1);
        size--;
    }
}
