package dev.sluice.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * Storage keys: {@code sluice:{<caller>}:<policy>:<suffix>}.
 *
 * <p>The caller is the Redis Cluster hash tag, so all limits of one decision share a slot while
 * callers spread over all slots. A caller identity that is short and made of plain characters is
 * kept as it is, readable in {@code redis-cli} (so such an identity does choose its slot, as any
 * key does); any other (long, binary, containing braces, colons or spaces) is replaced by
 * {@code #} and 22 characters of its SHA-256, so that no caller can inflate key sizes, break out
 * of the hash tag or collide with a plain identity.
 *
 * <p>Not API: this package may change in any release.
 */
public final class Keys {

    /** The prefix of every key Sluice writes. */
    public static final String PREFIX = "sluice:";
    private static final int MAX_PLAIN = 64;

    private Keys() {
    }

    /** The hash tag's content for a caller identity: the identity itself, or its hash. */
    public static String tag(String caller) {
        return isPlain(caller) ? caller : hashed(caller);
    }

    /** The key of one limit's state for a caller tag. */
    public static String key(String tag, String policy, String suffix) {
        return PREFIX + "{" + tag + "}:" + policy + ":" + suffix;
    }

    private static boolean isPlain(String caller) {
        int length = caller.length();
        if (length == 0 || length > MAX_PLAIN) {
            return false;
        }
        for (int i = 0; i < length; i++) {
            char c = caller.charAt(i);
            boolean plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '.' || c == '-' || c == '_' || c == '@' || c == '~';
            if (!plain) {
                return false;
            }
        }
        return true;
    }

    private static String hashed(String caller) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(caller.getBytes(StandardCharsets.UTF_8));
            return "#" + Base64.getUrlEncoder().withoutPadding().encodeToString(digest).substring(0, 22);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every Java platform", e);
        }
    }
}
