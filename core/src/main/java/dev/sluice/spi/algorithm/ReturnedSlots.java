package dev.sluice.spi.algorithm;

import java.util.Arrays;

/**
 * The slots of a token bucket or GCRA whose waiters gave them up while reservations were booked
 * behind them (the Redis store keeps them in the bucket's {@code :slots} key): instants, in store
 * microseconds, each with the tokens given up there, ascending, at most {@link #MOST}. A new
 * reservation takes the earliest one still ahead before it extends the schedule: the call goes at
 * an instant the schedule had already granted, so no two calls come closer than the limit allows.
 *
 * <p>They remember the units they were written under: a limit with other parameters reads none.
 * Immutable: {@link #add} and {@link #take} answer new slots. Encoded as longs by {@link #toLongs()}
 * ({@code perToken, perMicro, capacity}, then each instant and its tokens).
 */
public final class ReturnedSlots {

    /** The most slots a bucket keeps; a further one, later than all of them, passes unused. */
    public static final int MOST = 32;

    private final long perToken;
    private final long perMicro;
    private final long capacity;
    private final long[] at;
    private final long[] tokens;

    private ReturnedSlots(long perToken, long perMicro, long capacity, long[] at, long[] tokens) {
        this.perToken = perToken;
        this.perMicro = perMicro;
        this.capacity = capacity;
        this.at = at;
        this.tokens = tokens;
    }

    /** No slots, under the units of a bucket: {@code perToken}, {@code perMicro}, {@code capacity}. */
    static ReturnedSlots none(long perToken, long perMicro, long capacity) {
        return new ReturnedSlots(perToken, perMicro, capacity, new long[0], new long[0]);
    }

    /** The slots {@link #toLongs()} encoded. */
    public static ReturnedSlots fromLongs(long[] encoded) {
        if (encoded.length < 3 || encoded.length % 2 == 0 || encoded.length > 3 + 2 * MOST) {
            throw new IllegalArgumentException("'encoded' must hold 3 units and at most " + MOST
                    + " pairs, got " + encoded.length + " longs");
        }
        int n = (encoded.length - 3) / 2;
        long[] at = new long[n];
        long[] tokens = new long[n];
        for (int i = 0; i < n; i++) {
            at[i] = encoded[3 + 2 * i];
            tokens[i] = encoded[4 + 2 * i];
        }
        return new ReturnedSlots(encoded[0], encoded[1], encoded[2], at, tokens);
    }

    /** These slots as longs: the units, then each instant and its tokens; see {@link #fromLongs}. */
    public long[] toLongs() {
        long[] encoded = new long[3 + 2 * at.length];
        encoded[0] = perToken;
        encoded[1] = perMicro;
        encoded[2] = capacity;
        for (int i = 0; i < at.length; i++) {
            encoded[3 + 2 * i] = at[i];
            encoded[4 + 2 * i] = tokens[i];
        }
        return encoded;
    }

    boolean sameUnits(long perToken, long perMicro, long capacity) {
        return this.perToken == perToken && this.perMicro == perMicro && this.capacity == capacity;
    }

    /** How many slots there are. */
    public int size() {
        return at.length;
    }

    /** The instant of the {@code i}-th slot, ascending. */
    public long at(int i) {
        return at[i];
    }

    /** The tokens given up at {@code instant}; 0 if none. */
    long tokensAt(long instant) {
        int i = Arrays.binarySearch(at, instant);
        return i < 0 ? 0 : tokens[i];
    }

    /** These slots less {@code cost} of the tokens at {@code instant} (at least that many are there). */
    ReturnedSlots take(long instant, long cost) {
        int i = Arrays.binarySearch(at, instant);
        if (tokens[i] == cost) {
            return without(i);
        }
        long[] left = tokens.clone();
        left[i] -= cost;
        return new ReturnedSlots(perToken, perMicro, capacity, at, left);
    }

    /**
     * These slots with {@code cost} tokens at {@code instant} added, after dropping the slots before
     * {@code now} (nobody can use them); beyond {@link #MOST}, the latest slot goes.
     */
    ReturnedSlots add(long now, long instant, long cost) {
        int first = 0;
        while (first < at.length && at[first] < now) {
            first++;
        }
        long[] keptAt = Arrays.copyOfRange(at, first, at.length);
        long[] keptTokens = Arrays.copyOfRange(tokens, first, tokens.length);
        int i = Arrays.binarySearch(keptAt, instant);
        if (i >= 0) {
            keptTokens[i] += cost;
            return new ReturnedSlots(perToken, perMicro, capacity, keptAt, keptTokens);
        }
        int insert = -i - 1;
        int size = Math.min(MOST, keptAt.length + 1);
        long[] nextAt = new long[size];
        long[] nextTokens = new long[size];
        for (int j = 0, from = 0; j < size; j++) {
            if (j == insert) {
                nextAt[j] = instant;
                nextTokens[j] = cost;
            } else {
                nextAt[j] = keptAt[from];
                nextTokens[j] = keptTokens[from++];
            }
        }
        return new ReturnedSlots(perToken, perMicro, capacity, nextAt, nextTokens);
    }

    private ReturnedSlots without(int i) {
        long[] nextAt = new long[at.length - 1];
        long[] nextTokens = new long[at.length - 1];
        System.arraycopy(at, 0, nextAt, 0, i);
        System.arraycopy(at, i + 1, nextAt, i, at.length - i - 1);
        System.arraycopy(tokens, 0, nextTokens, 0, i);
        System.arraycopy(tokens, i + 1, nextTokens, i, tokens.length - i - 1);
        return new ReturnedSlots(perToken, perMicro, capacity, nextAt, nextTokens);
    }

    @Override
    public String toString() {
        return "ReturnedSlots" + Arrays.toString(toLongs());
    }
}
