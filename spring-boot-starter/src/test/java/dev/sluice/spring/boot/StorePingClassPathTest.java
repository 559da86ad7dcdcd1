package dev.sluice.spring.boot;

import dev.sluice.memory.MemoryStore;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.lang.reflect.Method;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.Arrays;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The health contributor's {@code PING} is chosen by what the class path holds: an application
 * with Redisson for something else and Sluice on another store (no {@code sluice-redis}) must get
 * a health check, not a {@link NoClassDefFoundError} for {@code RedisStore} at its first call.
 */
class StorePingClassPathTest {

    @Test
    void withRedissonButWithoutSluicesRedisStoresNothingIsPinged() throws Exception {
        try (URLClassLoader withoutSluiceRedis = new HidingLoader("dev.sluice.redis.")) {
            assertThat(withoutSluiceRedis.loadClass("org.redisson.api.RedissonClient")).isNotNull();
            Object store = withoutSluiceRedis.loadClass(MemoryStore.class.getName()).getMethod("create").invoke(null);

            assertThat(ping(withoutSluiceRedis).apply(store)).isNull();
        }
    }

    /** {@code StoreHealth.storePing} of a {@link SluiceManagement} loaded by {@code loader}. */
    @SuppressWarnings("unchecked")
    private static Function<Object, String> ping(ClassLoader loader) throws Exception {
        Method storePing = loader.loadClass(SluiceManagement.class.getName() + "$StoreHealth")
                .getDeclaredMethod("storePing", ClassLoader.class);
        storePing.setAccessible(true);
        return (Function<Object, String>) storePing.invoke(null, loader);
    }

    /** The test's class path, child first, without the classes under {@code hidden}. */
    private static final class HidingLoader extends URLClassLoader {
        private final String hidden;

        HidingLoader(String hidden) {
            super(classPath(), ClassLoader.getPlatformClassLoader());
            this.hidden = hidden;
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (name.startsWith(hidden)) {
                throw new ClassNotFoundException(name + " (hidden by the test)");
            }
            return super.loadClass(name, resolve);
        }

        private static URL[] classPath() {
            // Surefire runs tests from a manifest-only jar and names the real class path here
            String path = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
            return Arrays.stream(path.split(File.pathSeparator)).map(entry -> {
                try {
                    return new File(entry).toURI().toURL();
                } catch (MalformedURLException e) {
                    throw new IllegalStateException(e);
                }
            }).toArray(URL[]::new);
        }
    }
}
