package dev.sluice.redis;

import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/** Reads and writes decide.lua's stored bucket states by hand, for tests of their format. */
final class StoredState {

    private StoredState() {
    }

    /** The raw value of a token bucket's or GCRA's key: {@code null} when absent. */
    static String raw(RedissonClient client, String key) {
        Object value = client.getBucket(key, StringCodec.INSTANCE).get();
        return value == null ? null : value.toString();
    }

    /** The stored time of a token bucket written in the compact form {@code <level>.<time>.<fingerprint>}. */
    static long bucketTime(RedissonClient client, String key) {
        return Long.parseLong(raw(client, key).split("\\.")[1], 16);
    }

    /**
     * Rewrites a compact token-bucket or GCRA state as the version before wrote it: for the token
     * bucket the hash {@code l, t, f}, for GCRA the string {@code <tat>[:<rem>]@<written>@<f>}, all
     * decimal, {@code f} being {@code perToken,perMicro,capacity}. Keeps the TTL.
     */
    static void rewriteInOldFormat(RedissonClient client, String key, boolean gcra) {
        String[] v = raw(client, key).split("\\.");
        long ttl = client.getBucket(key, StringCodec.INSTANCE).remainTimeToLive();
        long[] n = new long[v.length];
        for (int i = 0; i < v.length; i++) {
            n[i] = Long.parseLong(v[i], 16);
        }
        client.getKeys().delete(key);
        if (gcra) {
            // tat, rem, tat - written, perToken, perMicro, burst
            String f = n[3] + "," + n[4] + "," + n[3] * n[5];
            String value = n[0] + (n[1] > 0 ? ":" + n[1] : "") + "@" + (n[0] - n[2]) + "@" + f;
            client.getBucket(key, StringCodec.INSTANCE).set(value);
        } else {
            // level, time, perToken, perMicro, burst
            var map = client.getMap(key, StringCodec.INSTANCE);
            map.put("l", Long.toString(n[0]));
            map.put("t", Long.toString(n[1]));
            map.put("f", n[2] + "," + n[3] + "," + n[2] * n[4]);
        }
        client.getBucket(key, StringCodec.INSTANCE).expire(java.time.Duration.ofMillis(ttl));
    }
}
