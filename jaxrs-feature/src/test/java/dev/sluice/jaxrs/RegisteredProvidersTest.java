package dev.sluice.jaxrs;

import jakarta.ws.rs.container.ResourceInfo;
import jakarta.ws.rs.core.FeatureContext;
import org.glassfish.jersey.server.ResourceConfig;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every class the feature registers by class (and the feature itself, which applications register
 * by class) is one any JAX-RS runtime can instantiate: the specification requires a public
 * constructor of provider classes, and RESTEasy and CXF call it without {@code setAccessible}, so
 * the class must be public, concrete and have a public no-arg constructor.
 */
class RegisteredProvidersTest {

    @Test
    void everyClassTheFeatureRegistersHasAPublicNoArgConstructor() throws Exception {
        List<Class<?>> registered = new ArrayList<>();
        FeatureContext context = (FeatureContext) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {FeatureContext.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "getConfiguration" -> new ResourceConfig();
                    case "register" -> {
                        if (args[0] instanceof Class<?> type) {
                            registered.add(type);
                        }
                        yield proxy;
                    }
                    case "property" -> proxy;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
        Method resourceMethod = Resources.IpLimited.class.getMethod("get");
        ResourceInfo info = new ResourceInfo() {
            @Override
            public Method getResourceMethod() {
                return resourceMethod;
            }

            @Override
            public Class<?> getResourceClass() {
                return Resources.IpLimited.class;
            }
        };
        RateLimitFeature feature = new RateLimitFeature();
        try {
            feature.configure(info, context);
        } finally {
            feature.close();
        }

        // The servlet API is on this class path, so the client-address filter is registered, by class.
        assertThat(registered).contains(ServletClientAddress.class);
        registered.add(RateLimitFeature.class);
        for (Class<?> type : registered) {
            assertThat(Modifier.isPublic(type.getModifiers())).as("%s is public", type.getName()).isTrue();
            assertThat(Modifier.isAbstract(type.getModifiers())).as("%s is abstract", type.getName()).isFalse();
            Constructor<?> constructor = type.getConstructor(); // public ones only; throws if there is none
            assertThat(Modifier.isPublic(constructor.getModifiers())).as("%s()", type.getName()).isTrue();
        }
    }
}
