package dev.sluice.jaxrs;

import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.web.SluiceConfig;
import dev.sluice.web.SluiceConfig.KeySource;
import jakarta.ws.rs.HttpMethod;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads the {@link RateLimit} annotations of one resource method into the limits decided
 * together for it. Every attribute goes through {@link SluiceConfig#parse}, the one parser of the
 * vocabulary; this class only adds where the value came from to the message and applies the
 * combination rules documented on {@link RateLimit}.
 */
final class Routes {

    private static final Logger LOG = LoggerFactory.getLogger(Routes.class);
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
        RateLimit[] annotations = methodLimits(resourceClass, method);
        if (annotations.length == 0) {
            // Method annotations replace class ones, as @RolesAllowed does.
            annotations = classLimits(resourceClass);
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

    /**
     * The {@link RateLimit}s of a resource method, found as Jakarta REST finds a method's JAX-RS
     * annotations (annotation inheritance, section 3.6): on the first of the resource class's
     * {@link #hierarchy} that declares the method (same name and parameter types) with
     * {@code @RateLimit} or with JAX-RS annotations of its own (on it or its parameters). So a
     * {@code @RateLimit} on an interface or superclass method is inherited by an implementation
     * method without JAX-RS annotations, and ignored (with a warning) below one that has them.
     * Empty if there is none.
     *
     * <p>The search starts at the resource class, whichever of the implementation or the interface
     * method the runtime hands over, so every runtime finds the same annotations.
     */
    static RateLimit[] methodLimits(Class<?> resourceClass, Method method) {
        Class<?> start = method.getDeclaringClass().isAssignableFrom(resourceClass) ? resourceClass
                : method.getDeclaringClass();
        Method annotated = null;
        for (Class<?> type : hierarchy(start)) {
            Method candidate = declared(type, method);
            if (candidate == null) {
                continue;
            }
            if (annotated == null) {
                if (candidate.isAnnotationPresent(RateLimit.class) || candidate.isAnnotationPresent(RateLimit.List.class)) {
                    return candidate.getAnnotationsByType(RateLimit.class);
                }
                if (hasJaxRsAnnotations(candidate)) {
                    annotated = candidate; // its annotations hide all those further up
                }
            } else if (candidate.getAnnotationsByType(RateLimit.class).length > 0) {
                LOG.warn("@RateLimit on '{}.{}' is ignored: '{}.{}' overrides it with JAX-RS annotations of its own, and "
                        + "then, by Jakarta REST annotation inheritance, all annotations of the overridden method are "
                        + "ignored; put the @RateLimit on '{}.{}'", type.getName(), candidate.getName(),
                        annotated.getDeclaringClass().getName(), annotated.getName(),
                        annotated.getDeclaringClass().getName(), annotated.getName());
                break;
            }
        }
        return new RateLimit[0];
    }

    /**
     * The class-level {@link RateLimit}s for a resource class: those of the first of its
     * {@link #hierarchy} that has any, so the class's own replace its superclasses', which replace
     * its interfaces'. Empty if there is none.
     */
    static RateLimit[] classLimits(Class<?> resourceClass) {
        for (Class<?> type : hierarchy(resourceClass)) {
            RateLimit[] annotations = type.getDeclaredAnnotationsByType(RateLimit.class);
            if (annotations.length > 0) {
                return annotations;
            }
        }
        return new RateLimit[0];
    }

    /**
     * Where annotations are looked up, in order of precedence: the class, its superclasses (nearest
     * first, {@code Object} excluded), then the interfaces: those of the class in declaration order,
     * each followed by its super-interfaces, then those of its superclasses.
     */
    static List<Class<?>> hierarchy(Class<?> type) {
        List<Class<?>> classes = new ArrayList<>();
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            classes.add(c);
        }
        Set<Class<?>> interfaces = new LinkedHashSet<>();
        for (Class<?> c : List.copyOf(classes)) {
            for (Class<?> i : c.getInterfaces()) {
                addWithSuperInterfaces(i, interfaces);
            }
        }
        classes.addAll(interfaces);
        return classes;
    }

    private static void addWithSuperInterfaces(Class<?> type, Set<Class<?>> into) {
        if (into.add(type)) {
            for (Class<?> i : type.getInterfaces()) {
                addWithSuperInterfaces(i, into);
            }
        }
    }

    /** {@code type}'s own declaration of an instance method like {@code method}, or {@code null}. */
    private static Method declared(Class<?> type, Method method) {
        try {
            Method m = type.getDeclaredMethod(method.getName(), method.getParameterTypes());
            return m.isSynthetic() || Modifier.isStatic(m.getModifiers()) || Modifier.isPrivate(m.getModifiers()) ? null : m;
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    /**
     * Whether a method or one of its parameters carries a JAX-RS annotation: one of the
     * {@code jakarta.ws.rs} packages, or a request method designator (meta-annotated {@link HttpMethod}).
     */
    static boolean hasJaxRsAnnotations(Method method) {
        for (Annotation a : method.getDeclaredAnnotations()) {
            if (isJaxRs(a)) {
                return true;
            }
        }
        for (Annotation[] parameter : method.getParameterAnnotations()) {
            for (Annotation a : parameter) {
                if (isJaxRs(a)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean isJaxRs(Annotation annotation) {
        Class<? extends Annotation> type = annotation.annotationType();
        String pkg = type.getPackageName();
        return pkg.equals("jakarta.ws.rs") || pkg.startsWith("jakarta.ws.rs.") || type.isAnnotationPresent(HttpMethod.class);
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
