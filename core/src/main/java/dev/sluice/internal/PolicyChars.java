package dev.sluice.internal;

/**
 * The one definition of the characters a policy name (and a tier's name) is made of,
 * {@value #DESCRIPTION}: safe in storage keys, response headers and problem bodies without
 * escaping. {@code Limit} checks policies against it, the web layer derives default policy names
 * and checks tier names with it, and error messages quote {@link #DESCRIPTION}.
 *
 * <p>Not API: this package may change in any release.
 */
public final class PolicyChars {

    /** The set as messages and documentation write it. */
    public static final String DESCRIPTION = "A-Z a-z 0-9 . _ ~ -";
    /** The longest policy name, a tier's {@code <policy>/<tier>} included. */
    public static final int MAX_LENGTH = 64;
    /** Between a route's policy and a tier's name; outside the set, so no configured policy holds it. */
    public static final char TIER_SEPARATOR = '/';

    private PolicyChars() {
    }

    /** Whether a policy name may contain {@code c}. */
    public static boolean allowed(int c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || c == '.' || c == '_' || c == '~' || c == '-';
    }

    /** Whether {@code text} is 1 to {@code max} characters, every one of the set. */
    public static boolean isName(String text, int max) {
        return text != null && text.length() <= max && isName(text, 0, text.length());
    }

    /**
     * Whether {@code policy} is a policy: 1 to {@value #MAX_LENGTH} characters, one name of the set,
     * or two joined by {@link #TIER_SEPARATOR} (a tier's state, {@code <policy>/<tier>}).
     */
    public static boolean isPolicy(String policy) {
        if (policy == null || policy.length() > MAX_LENGTH) {
            return false;
        }
        int slash = policy.indexOf(TIER_SEPARATOR);
        return slash < 0 ? isName(policy, 0, policy.length())
                : isName(policy, 0, slash) && isName(policy, slash + 1, policy.length());
    }

    private static boolean isName(String text, int from, int to) {
        if (from >= to) {
            return false;
        }
        for (int i = from; i < to; i++) {
            if (!allowed(text.charAt(i))) {
                return false;
            }
        }
        return true;
    }
}
