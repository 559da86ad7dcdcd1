package dev.sluice.jaxrs;

import dev.sluice.Limit;
import dev.sluice.web.internal.PolicyNames;
import dev.sluice.web.internal.RouteSpec;
import jakarta.ws.rs.HttpMethod;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * Reads the {@link RateLimit} annotations of one resource method into the routes decided together
 * for it: typed attributes straight into {@link RouteSpec#of}, whose checks and messages are those
 * of {@code web.xml}; this class finds the annotations as documented on {@link RateLimit}, names
 * default policies and adds the resource method to messages.
 */
final class Routes {

    private static final Logger LOG = LoggerFactory.getLogger(Routes.class);

    private Routes() {
    }

    /**
     * What the annotations of one resource method ask for.
     *
     * @param routes one per annotation, in annotation order, decided together
     */
    record Plan(List<RouteSpec> routes) {
        /** The limits of the routes, in order. */
        List<Limit> limits() {
            return routes.stream().map(RouteSpec::limit).toList();
        }
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
        String base = resourceClass.getSimpleName() + "." + method.getName();
        String signature = PolicyNames.signature(resourceClass, method);
        List<RouteSpec> routes = new ArrayList<>();
        for (int i = 0; i < annotations.length; i++) {
            RateLimit a = annotations[i];
            String policy = a.policy().isBlank()
                    ? PolicyNames.forResourceMethod(base, signature, annotations.length == 1 ? "" : "-" + (i + 1))
                    : a.policy().trim();
            try {
                routes.add(RouteSpec.of(policy, a.algorithm(), a.limit(), a.burst(), a.cost(), a.key(), a.failureMode(),
                        String.join(",", a.tiers()), String.join(",", a.methods()))
                        .withCompletion(a.charge(), a.chargeWhen(), a.lease()));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(where(resourceClass, method) + ": " + e.getMessage(), e);
            }
        }
        return new Plan(List.copyOf(routes));
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
                if (candidate.isAnnotationPresent(RateLimit.class)
                        || candidate.isAnnotationPresent(RateLimit.List.class)) {
                    return candidate.getAnnotationsByType(RateLimit.class);
                }
                if (hasJaxRsAnnotations(candidate)) {
                    annotated = candidate; // its annotations hide all those further up
                }
            } else if (candidate.getAnnotationsByType(RateLimit.class).length > 0) {
                LOG.warn("@RateLimit on '{}.{}' is ignored: '{}.{}' overrides it with JAX-RS annotations of its own, "
                        + "and then, by Jakarta REST annotation inheritance, all annotations of the overridden "
                        + "method are "
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
            return m.isSynthetic() || Modifier.isStatic(m.getModifiers()) || Modifier.isPrivate(m.getModifiers()) ? null
                    : m;
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
        return pkg.equals("jakarta.ws.rs") || pkg.startsWith("jakarta.ws.rs.")
                || type.isAnnotationPresent(HttpMethod.class);
    }

    /** How messages name a resource method: {@code @RateLimit on resource method 'com.example.Orders.list'}. */
    static String where(Class<?> resourceClass, Method method) {
        return "@RateLimit on resource method '" + resourceClass.getName() + "." + method.getName() + "'";
    }
}
