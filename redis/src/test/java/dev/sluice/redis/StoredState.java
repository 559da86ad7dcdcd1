package dev.sluice.redis;

import org.redisson.api.RType;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.ByteArrayCodec;

import java.nio.ByteBuffer;

/**
 * Reads decide.lua's stored bucket states by hand, for tests of their format: the
 * binary form (7 bytes of time, big-endian, then the MessagePack integers debt, perToken,
 * perMicro, burst).
 */
final class StoredState {

    /**
     * A bucket's state in the current form: {@code debt} is capacity - level (token bucket) or the units owed (GCRA).
     */
    record State(long time, long debt, long perToken, long perMicro, long burst) {
        long capacity() {
            return perToken * burst;
        }
    }

    private StoredState() {
    }

    /** The raw bytes of a token bucket's or GCRA's key: {@code null} when absent. */
    static byte[] raw(RedissonClient client, String key) {
        return (byte[]) client.getBucket(key, ByteArrayCodec.INSTANCE).get();
    }

    /** Whether the key holds a state in the current binary form: a time's first byte is below 0x20. */
    static boolean isCurrent(RedissonClient client, String key) {
        if (client.getKeys().getType(key) != RType.OBJECT) {
            return false;
        }
        byte[] raw = raw(client, key);
        return raw != null && raw.length >= 11 && raw[0] >= 0 && raw[0] < 0x20;
    }

    /** The state of a key in the current form. */
    static State read(RedissonClient client, String key) {
        if (!isCurrent(client, key)) {
            throw new IllegalStateException(key + " does not hold a state in the current form");
        }
        ByteBuffer in = ByteBuffer.wrap(raw(client, key));
        long time = 0;
        for (int i = 0; i < 7; i++) {
            time = (time << 8) | (in.get() & 0xff);
        }
        State state = new State(time, unsigned(in), unsigned(in), unsigned(in), unsigned(in));
        if (in.hasRemaining()) {
            throw new IllegalStateException(key + " holds " + in.remaining() + " bytes after its state");
        }
        return state;
    }

    /** A non-negative MessagePack integer, as Redis's cmsgpack writes one: the shortest form. */
    private static long unsigned(ByteBuffer in) {
        int tag = in.get() & 0xff;
        if (tag <= 0x7f) {
            return tag;
        }
        return switch (tag) {
            case 0xcc -> in.get() & 0xffL;
            case 0xcd -> in.getShort() & 0xffffL;
            case 0xce -> in.getInt() & 0xffffffffL;
            case 0xcf -> in.getLong();
            default -> throw new IllegalStateException("not a non-negative MessagePack integer: 0x"
                    + Integer.toHexString(tag));
        };
    }

    /** The stored time of a token bucket or GCRA in the current form. */
    static long bucketTime(RedissonClient client, String key) {
        return read(client, key).time();
    }
}
