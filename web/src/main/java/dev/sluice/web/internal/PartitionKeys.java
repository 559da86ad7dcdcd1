package dev.sluice.web.internal;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;

/**
 * The draft's partition key {@code pk}: the first 12 bytes of HMAC-SHA256 of the caller's key
 * under a random 256-bit secret drawn once per class loader (so per web application when Sluice
 * is in {@code WEB-INF/lib}), as an SF Byte Sequence {@code :base64:}. Equal callers get equal
 * keys while the application runs; without the secret, the key cannot be recomputed from a
 * guessed caller (an address space is small enough to hash exhaustively, so a plain hash
 * would disclose the address). The key changes when the application restarts and differs
 * between instances behind one load balancer.
 *
 * <h2>The cache</h2>
 *
 * <p>Every decided request needs its caller's key (a request attribute), and the HMAC is most of
 * the web layer's CPU per request, so the keys of recent callers are kept: {@value #SLOTS} slots,
 * one caller each, chosen by the caller key's hash; a newcomer replaces the slot's caller. Caller
 * keys longer than {@value #MAX_CACHED_LENGTH} characters are hashed every time and never kept, so
 * the cache holds at most {@value #SLOTS} callers of bounded size whatever clients send. A client
 * rotating keys, or crafting keys of one hash to evict another caller's, only makes lookups miss:
 * a miss costs the HMAC every request paid before, plus one comparison and one small entry. The
 * cache holds callers' keys and their partition keys, never the secret.
 */
final class PartitionKeys {

    /** How many callers the cache keeps: a power of two. */
    static final int SLOTS = 1024;
    /** The longest caller key kept, in characters; longer ones are hashed on every request. */
    static final int MAX_CACHED_LENGTH = 128;

    private static final byte[] ALPHABET =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".getBytes(StandardCharsets.ISO_8859_1);
    private static final byte[] SECRET = new byte[32];
    private static final ThreadLocal<Mac> MAC;
    /**
     * The cached callers. Written and read without locks: an {@link Entry} has only final fields,
     * so a thread sees either a whole entry or an older one (or none), and then hashes again.
     */
    private static final Entry[] CACHE = new Entry[SLOTS];

    static {
        new SecureRandom().nextBytes(SECRET);
        MAC = ThreadLocal.withInitial(() -> {
            try {
                Mac mac = Mac.getInstance("HmacSHA256");
                mac.init(new SecretKeySpec(SECRET, "HmacSHA256"));
                return mac;
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("HmacSHA256 is required of every Java platform", e);
            }
        });
    }

    /** One cached caller: its key and its partition key. */
    private record Entry(String caller, String partition) {
    }

    private PartitionKeys() {
    }

    /**
     * Draws the secret now, if not yet drawn: this class's initialisation reads the platform's
     * entropy source (a file, {@code /dev/urandom}), which belongs at start-up, never on the first
     * request's thread (an event loop under WebFlux, which must not block).
     */
    static void ready() {
        // Class initialisation does the work.
    }

    /** The {@code pk} value of a caller key, such as {@code :q0Jx5y8Pq2mUo8cW:}. */
    static String of(String callerKey) {
        if (callerKey.length() > MAX_CACHED_LENGTH) {
            return hash(callerKey);
        }
        int h = callerKey.hashCode();
        int slot = (h ^ (h >>> 16)) & (SLOTS - 1);
        Entry cached = CACHE[slot];
        if (cached != null && cached.caller.equals(callerKey)) {
            return cached.partition;
        }
        String partition = hash(callerKey);
        CACHE[slot] = new Entry(callerKey, partition);
        return partition;
    }

    /** The {@code pk} value of a caller key, computed now. */
    static String hash(String callerKey) {
        return encode(MAC.get().doFinal(callerKey.getBytes(StandardCharsets.UTF_8)));
    }

    /**
     * {@code :base64:} of the first 12 bytes of {@code mac}: 16 characters of the standard
     * alphabet, no padding (12 bytes are four whole groups of three), written straight into the
     * string's bytes, which on a cache miss saves the copies {@link Base64} and concatenation make.
     */
    static String encode(byte[] mac) {
        byte[] out = new byte[18];
        out[0] = ':';
        for (int group = 0; group < 4; group++) {
            int bits = (mac[group * 3] & 0xFF) << 16 | (mac[group * 3 + 1] & 0xFF) << 8 | (mac[group * 3 + 2] & 0xFF);
            int at = 1 + group * 4;
            out[at] = ALPHABET[bits >>> 18];
            out[at + 1] = ALPHABET[(bits >>> 12) & 0x3F];
            out[at + 2] = ALPHABET[(bits >>> 6) & 0x3F];
            out[at + 3] = ALPHABET[bits & 0x3F];
        }
        out[17] = ':';
        return new String(out, StandardCharsets.ISO_8859_1);
    }

    /** How many callers the cache holds now, for tests. */
    static int cachedEntries() {
        return (int) Arrays.stream(CACHE.clone()).filter(e -> e != null).count();
    }

    /** The characters of the caller keys the cache holds now, for tests. */
    static long cachedChars() {
        return Arrays.stream(CACHE.clone()).filter(e -> e != null).mapToLong(e -> e.caller.length()).sum();
    }
}
