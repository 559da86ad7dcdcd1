package dev.sluice.tck;

import org.junit.jupiter.api.extension.ClassTemplateInvocationContext;
import org.junit.jupiter.api.extension.ClassTemplateInvocationContextProvider;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.platform.commons.support.AnnotationSupport;
import org.junit.platform.commons.support.ReflectionSupport;

import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Runs a {@link Needs} group once when the store supports what it needs, never otherwise.
 *
 * <p>The store's declaration comes from {@link RateLimitStoreKit#supports(Capability)} on an
 * instance of the store's kit class made for the question (JUnit makes the instances that run
 * tests later, one per test), once per class and run.
 */
final class WhenSupported implements ClassTemplateInvocationContextProvider {

    private static final ExtensionContext.Namespace KITS = ExtensionContext.Namespace.create(WhenSupported.class);

    WhenSupported() {
    }

    @Override
    public boolean supportsClassTemplate(ExtensionContext context) {
        return AnnotationSupport.isAnnotated(context.getRequiredTestClass(), Needs.class);
    }

    @Override
    public Stream<ClassTemplateInvocationContext> provideClassTemplateInvocationContexts(ExtensionContext context) {
        List<Capability> needs = Arrays.asList(AnnotationSupport.findAnnotation(context.getRequiredTestClass(),
                Needs.class).orElseThrow().value());
        RateLimitStoreKit kit = kit(context);
        if (!needs.stream().allMatch(kit::supports)) {
            return Stream.empty(); // the refusals group checks what the store leaves out
        }
        String name = needs.stream().map(Capability::name).collect(Collectors.joining(", ")) + " supported";
        return Stream.of(new ClassTemplateInvocationContext() {
            @Override
            public String getDisplayName(int invocationIndex) {
                return name;
            }
        });
    }

    @Override
    public boolean mayReturnZeroClassTemplateInvocationContexts(ExtensionContext context) {
        return true;
    }

    /** The kit of the store under test: the class the group is nested in, a subclass of the kit. */
    private static RateLimitStoreKit kit(ExtensionContext context) {
        for (Optional<ExtensionContext> c = Optional.of(context); c.isPresent(); c = c.get().getParent()) {
            Optional<Class<?>> type = c.get().getTestClass();
            if (type.isPresent() && RateLimitStoreKit.class.isAssignableFrom(type.get())) {
                Class<? extends RateLimitStoreKit> kit = type.get().asSubclass(RateLimitStoreKit.class);
                return context.getRoot().getStore(KITS).getOrComputeIfAbsent(kit, ReflectionSupport::newInstance,
                        RateLimitStoreKit.class);
            }
        }
        throw new IllegalStateException(context.getRequiredTestClass().getName()
                + " is a group of RateLimitStoreKit: it runs nested in a store's kit test");
    }
}
