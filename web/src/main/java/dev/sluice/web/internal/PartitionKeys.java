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
 */
final class PartitionKeys {

    private static final byte[] SECRET = new byte[32];
    private static final ThreadLocal<Mac> MAC;

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

    private PartitionKeys() {
    }

    /** The {@code pk} value of a caller key, such as {@code :q0Jx5y8Pq2mUo8cW:}. */
    static String of(String callerKey) {
        byte[] mac = MAC.get().doFinal(callerKey.getBytes(StandardCharsets.UTF_8));
        return ":" + Base64.getEncoder().encodeToString(Arrays.copyOf(mac, 12)) + ":";
    }
}
