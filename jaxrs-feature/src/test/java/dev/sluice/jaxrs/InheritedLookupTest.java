package dev.sluice.jaxrs;

import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runtimes differ in which method {@code ResourceInfo} names (Jersey: the implementation; others
 * may name the interface method carrying the JAX-RS annotations): the lookup gives the same
 * limits either way. Over HTTP, see {@link AnnotationInheritanceTest}.
 */
class InheritedLookupTest {

    private static String limits(Class<?> resourceClass, Method method) {
        return Routes.read(resourceClass, method).limits().toString();
    }

    @Test
    void theInterfaceMethodAndTheImplementationMethodGiveTheSameLimits() throws Exception {
        for (String name : new String[] {"list", "get", "special"}) {
            Class<?>[] parameters = name.equals("list") ? new Class<?>[0] : new Class<?>[] {String.class};
            Method api = Inherited.WidgetsApi.class.getMethod(name, parameters);
            Method impl = Inherited.WidgetsImpl.class.getMethod(name, parameters);
            assertThat(limits(Inherited.WidgetsImpl.class, api)).as(name)
                    .isEqualTo(limits(Inherited.WidgetsImpl.class, impl));
        }
        assertThat(Routes.read(Inherited.WidgetsImpl.class, Inherited.WidgetsApi.class.getMethod("list")).limits())
                .singleElement().satisfies(limit -> {
                    assertThat(limit.count()).isEqualTo(2);
                    assertThat(limit.policy()).isEqualTo("WidgetsImpl.list~400ebc8f");
                });
    }

    @Test
    void jaxRsAnnotationsOnAMethodOrItsParametersHideTheOverriddenMethods() throws Exception {
        assertThat(Routes.hasJaxRsAnnotations(Inherited.QuotasImpl.class.getMethod("list"))).isTrue();
        assertThat(Routes.hasJaxRsAnnotations(Inherited.WidgetsApi.class.getMethod("get", String.class))).isTrue();
        assertThat(Routes.hasJaxRsAnnotations(Inherited.WidgetsImpl.class.getMethod("get", String.class))).isFalse();
        assertThat(Routes.read(Inherited.QuotasImpl.class, Inherited.QuotasImpl.class.getMethod("list"))).isNull();
    }
}
