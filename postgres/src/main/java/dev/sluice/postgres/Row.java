package dev.sluice.postgres;

/**
 * One stored row as a decision read it: whether it exists (expired or not), the version a write
 * must find to replace it, its expiry and its state.
 */
record Row(boolean exists, long version, long expiresAt, long[] state) {

    /** A key with no row. */
    static final Row NONE = new Row(false, 0, 0, null);

    /** The state as of {@code now}: {@code absent} when there is no row or it has expired. */
    long[] current(long now, long[] absent) {
        return exists && expiresAt > now ? state : absent;
    }
}
