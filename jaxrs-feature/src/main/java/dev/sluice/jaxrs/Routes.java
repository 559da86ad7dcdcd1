package dev.sluice.jaxrs;

import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.SluiceConfig;
import dev.sluice.SluiceConfig.KeySource;

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Reads the {@link RateLimit} annotations of one resource method into the limits decided
 * together for it. Every attribute goes through {@link SluiceConfig#parse}, the one parser of the
 * vocabulary; this class only adds where the value came from to the message and applies the
 * combination rules documented on {@link RateLimit}.
 */
final class Routes {

    private static final Pattern NOT_POLICY = Pattern.compile("[^A-Za-z0-9._~-]");
    private static final int MAX_POLICY = 64;
    private static final int HASH_DIGITS = 8;

    private Routes() {
    }

    /**
     * What the annotations of one resource method ask for.
     *
     * @param limits      decided together, in annotation order
     * @param key         the one key of them all
     * @param failureMode {@code CLOSED} if any annotation says so
     */
    record Plan(List<Limit> limits, List<KeySource> key, FailureMode failureMode) {
    }

    /**
     * The plan of a resource method, or {@code null} when neither it nor its class is annotated.
     *
     * @throws IllegalArgumentException naming the method, the attribute and the raw value
     */
    static Plan read(Class<?> resourceClass, Method method) {
        RateLimit[] annotations = method.getAnnotationsByType(RateLimit.class);
        if (annotations.length == 0) {
            // Method annotations replace class ones, as @RolesAllowed does.
            annotations = resourceClass.getAnnotationsByType(RateLimit.class);
        }
        if (annotations.length == 0) {
            return null;
        }
        String where = where(resourceClass, method);
        String basePolicy = resourceClass.getSimpleName() + "." + method.getName();
        String signature = signature(resourceClass, method);
        List<Limit> limits = new ArrayList<>();
        List<KeySource> key = null;
        String keyRaw = null;
        String keyPolicy = null;
        FailureMode failureMode = FailureMode.OPEN;
        for (int i = 0; i < annotations.length; i++) {
            RateLimit a = annotations[i];
            String defaultPolicy = defaultPolicy(basePolicy, signature, annotations.length == 1 ? "" : "-" + (i + 1));
            SluiceConfig config;
            try {
                config = SluiceConfig.parse(lookup(a)::get, defaultPolicy);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
            }
            if (key == null) {
                key = config.key();
                keyRaw = a.key();
                keyPolicy = config.limit().policy();
            } else if (!key.equals(config.key())) {
                throw new IllegalArgumentException(where + ": repeated limits are decided together for one caller, "
                        + "so they must share one 'key', got '" + keyRaw + "' (policy '" + keyPolicy + "') and '"
                        + a.key() + "' (policy '" + config.limit().policy() + "')");
            }
            if (config.failureMode() == FailureMode.CLOSED) {
                failureMode = FailureMode.CLOSED;
            }
            limits.add(config.limit());
        }
        return new Plan(List.copyOf(limits), key, failureMode);
    }

    /** How messages name a resource method: {@code @RateLimit on resource method 'com.example.Orders.list'}. */
    static String where(Class<?> resourceClass, Method method) {
        return "@RateLimit on resource method '" + resourceClass.getName() + "." + method.getName() + "'";
    }

    /** The attributes as raw values of the vocabulary, so that they meet the same parser as web.xml's. */
    private static Map<String, String> lookup(RateLimit a) {
        Map<String, String> values = new HashMap<>();
        values.put("limit", a.limit());
        if (a.burst() != 0) { // 0 is the annotation's way of saying "absent"
            values.put("burst", Long.toString(a.burst()));
        }
        values.put("algorithm", a.algorithm().configName());
        values.put("key", a.key());
        values.put("cost", Long.toString(a.cost()));
        if (!a.policy().isEmpty()) {
            values.put("policy", a.policy());
        }
        values.put("failure-mode", a.failureMode().configName());
        return values;
    }

    /**
     * What the default policy name's hash identifies: {@code <binary class name>.<method>(<parameter
     * types>)}, e.g. {@code com.example.Orders.get(java.lang.String,int)}. It depends on nothing
     * but the code, so every node of an application (and every restart) computes the same one.
     */
    static String signature(Class<?> resourceClass, Method method) {
        StringBuilder signature = new StringBuilder(resourceClass.getName()).append('.').append(method.getName()).append('(');
        Class<?>[] parameters = method.getParameterTypes();
        for (int i = 0; i < parameters.length; i++) {
            signature.append(i == 0 ? "" : ",").append(parameters[i].getTypeName());
        }
        return signature.append(')').toString();
    }

    /**
     * {@code <SimpleClassName>.<method>~<hash><suffix>} in the policy charset, {@code <hash>} being the
     * first 8 hex digits of the SHA-256 of {@link #signature}: unique per resource method (overloads
     * and same-named classes of other packages included), short and readable. A base too long is cut
     * so that the whole stays within 64 characters; the hash still tells it apart.
     */
    static String defaultPolicy(String base, String signature, String suffix) {
        String clean = NOT_POLICY.matcher(base).replaceAll("_");
        if (clean.isEmpty()) {
            clean = "resource";
        }
        String hash = "~" + sha256Hex(signature).substring(0, HASH_DIGITS);
        int room = MAX_POLICY - hash.length() - suffix.length();
        return (clean.length() <= room ? clean : clean.substring(0, room)) + hash + suffix;
    }

    private static String sha256Hex(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every Java platform", e);
        }
    }
}
