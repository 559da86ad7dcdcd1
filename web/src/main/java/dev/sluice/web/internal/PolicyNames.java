package dev.sluice.web.internal;

import dev.sluice.internal.PolicyChars;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Default policy names, when {@code policy} is not given, in the policy character set
 * ({@link PolicyChars}: {@code A-Z a-z 0-9 . _ ~ -}) of at most {@value #MAX_LENGTH} characters
 * (the set {@link dev.sluice.Limit} checks, and the reason problem bodies need no escaping).
 *
 * <p>Not API: this package may change in any release.
 */
public final class PolicyNames {

    /** The longest policy name. */
    public static final int MAX_LENGTH = PolicyChars.MAX_LENGTH;

    private static final int HASH_DIGITS = 8;

    private PolicyNames() {
    }

    /** {@code text} with each character outside the set replaced by {@code replacement}, cut to {@code max}. */
    static String sanitize(String text, char replacement, int max) {
        StringBuilder clean = new StringBuilder(Math.min(text.length(), max));
        text.codePoints().limit(max).forEach(c -> clean.append(PolicyChars.allowed(c) ? (char) c : replacement));
        return clean.toString();
    }

    /**
     * A servlet filter's default policy: its name, each character outside the set replaced by
     * {@code -}, cut to {@value #MAX_LENGTH}; {@code sluice} for no name.
     */
    public static String forFilter(String filterName) {
        return filterName == null || filterName.isEmpty() ? "sluice" : sanitize(filterName, '-', MAX_LENGTH);
    }

    /**
     * A resource method's default policy, {@code <base>~<hash><suffix>}: {@code base} (such as
     * {@code Orders.get}) with each character outside the set replaced by {@code _}, {@code <hash>}
     * the first 8 hex digits of the SHA-256 of {@code signature}, which tells the method apart
     * (overloads and same-named classes of other packages included). A base too long is cut so
     * that the whole stays within {@value #MAX_LENGTH} characters; the hash still tells it apart.
     *
     * @param base      the readable part, {@code <SimpleClassName>.<method>}
     * @param signature what identifies the method, the same on every node and restart
     * @param suffix    {@code ""}, or {@code -1}, {@code -2}, ... for repeated annotations
     */
    public static String forResourceMethod(String base, String signature, String suffix) {
        String hash = "~" + sha256Hex(signature).substring(0, HASH_DIGITS);
        String clean = sanitize(base, '_', MAX_LENGTH - hash.length() - suffix.length());
        return (clean.isEmpty() ? "resource" : clean) + hash + suffix;
    }

    /**
     * What a handler method's default policy name hashes ({@link #forResourceMethod}):
     * {@code <binary class name>.<method>(<parameter types>)}, e.g.
     * {@code com.example.Orders.get(java.lang.String,int)}. It depends on nothing but the code, so
     * every node of an application (and every restart) computes the same one; JAX-RS resources and
     * Spring MVC handlers are named alike.
     */
    public static String signature(Class<?> type, java.lang.reflect.Method method) {
        StringBuilder signature = new StringBuilder(type.getName()).append('.').append(method.getName()).append('(');
        Class<?>[] parameters = method.getParameterTypes();
        for (int i = 0; i < parameters.length; i++) {
            signature.append(i == 0 ? "" : ",").append(parameters[i].getTypeName());
        }
        return signature.append(')').toString();
    }

    private static String sha256Hex(String text) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every Java platform", e);
        }
    }
}
