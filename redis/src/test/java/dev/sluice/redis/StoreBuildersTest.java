package dev.sluice.redis;

import dev.sluice.TimeSource;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Both public store builders refuse the same bad settings with the same exceptions and messages,
 * naming the setting and the value, and each setter answers the builder it was called on.
 * Called by name, so that the two builders' public setters are held to one list.
 */
class StoreBuildersTest {

    @ParameterizedTest(name = "{0}")
    @ValueSource(classes = {RedisStore.class, LettuceStore.class})
    void badSettingsAreRefusedNamingTheSettingAndTheValue(Class<?> store) throws Exception {
        assertThat(refusal(store, "startupWait", Duration.class, Duration.ofMillis(-1)))
                .isExactlyInstanceOf(IllegalArgumentException.class)
                .hasMessage("'startupWait' must not be negative, got 'PT-0.001S'");
        assertThat(refusal(store, "localRejections", int.class, -1))
                .isExactlyInstanceOf(IllegalArgumentException.class)
                .hasMessage("'localRejections' must not be negative, got '-1'");
        assertThat(refusal(store, "localRejectionTtl", Duration.class, Duration.ZERO))
                .isExactlyInstanceOf(IllegalArgumentException.class)
                .hasMessage("'localRejectionTtl' must be at least 1ms, got 'PT0S'");
        assertThat(refusal(store, "hotKeyThreshold", int.class, -1))
                .isExactlyInstanceOf(IllegalArgumentException.class)
                .hasMessage("'hotKeyThreshold' must not be negative, got '-1'");
        assertThat(refusal(store, "startupWait", Duration.class, null))
                .isExactlyInstanceOf(NullPointerException.class).hasMessage("wait");
        assertThat(refusal(store, "localRejectionTtl", Duration.class, null))
                .isExactlyInstanceOf(NullPointerException.class).hasMessage("ttl");
        assertThat(refusal(store, "timeSourceForTesting", TimeSource.class, null))
                .isExactlyInstanceOf(NullPointerException.class).hasMessage("time");
    }

    /** What the setter of a new builder of {@code store} throws for {@code value}. */
    private static Throwable refusal(Class<?> store, String setter, Class<?> type, Object value) throws Exception {
        Object builder = store.getMethod("builder").invoke(null);
        Method method = builder.getClass().getMethod(setter, type);
        assertThat(method.getReturnType()).as(setter + " answers the builder").isEqualTo(builder.getClass());
        try {
            method.invoke(builder, value);
        } catch (InvocationTargetException e) {
            return e.getCause();
        }
        return fail(store.getSimpleName() + ".Builder." + setter + " took " + value);
    }
}
