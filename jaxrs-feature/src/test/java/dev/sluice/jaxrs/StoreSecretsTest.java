package dev.sluice.jaxrs;

import dev.sluice.testing.LogCapture;
import dev.sluice.testing.TestRedis;
import org.glassfish.jersey.server.ResourceConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A password in {@code sluice.store} never reaches a log line or an exception message of the
 * start-up, whether the value is good or bad: Sluice writes it {@code redis://app:***@host:port}.
 */
class StoreSecretsTest {

    private static final String PASSWORD = "Pw-" + UUID.randomUUID();
    private static TestRedis locked;

    @TempDir
    static Path files;

    @BeforeAll
    static void start() {
        locked = TestRedis.start("requirepass " + PASSWORD);
    }

    @AfterAll
    static void stop() {
        locked.stop();
    }

    /** Store values holding the password, whether the application starts, and how messages must show it. */
    static List<Arguments> values() throws IOException {
        int port = locked.port();
        int dead = TestRedis.freePort();
        Path unterminated = Files.writeString(files.resolve("unterminated.yaml"),
                "singleServerConfig:\n  address: \"redis://127.0.0.1:" + dead + "\"\n  password: \"" + PASSWORD + "\n");
        Path wrongType = Files.writeString(files.resolve("wrong-type.yaml"),
                "singleServerConfig:\n  address: \"redis://127.0.0.1:" + dead + "\"\n  database: \"" + PASSWORD
                + "\"\n");
        return List.of(
                Arguments.of("redis://:" + PASSWORD + "@127.0.0.1:" + port, true, "redis://:***@127.0.0.1:" + port),
                Arguments.of("redis://app:" + PASSWORD + "@127.0.0.1:" + port, true,
                        "redis://app:***@127.0.0.1:" + port),
                Arguments.of("rediss://app:" + PASSWORD + "@127.0.0.1:" + dead, true,
                        "rediss://app:***@127.0.0.1:" + dead),
                Arguments.of("redis://app:" + PASSWORD + "@127.0.0.1:99999", false, "redis://app:***@127.0.0.1:99999"),
                Arguments.of("redis://app:" + PASSWORD + "@127.0.0.1:6379/99", false,
                        "redis://app:***@127.0.0.1:6379/99"),
                Arguments.of("redis://app:" + PASSWORD + "@ho^st:6379", false, "redis://app:***@ho^st:6379"),
                Arguments.of("mongodb://app:" + PASSWORD + "@127.0.0.1", false, "mongodb://app:***@127.0.0.1"),
                Arguments.of("redisson:" + unterminated, false, "redisson:" + unterminated),
                Arguments.of("redisson:" + wrongType, false, "redisson:" + wrongType));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("values")
    void noLogLineAndNoMessageOfTheStartUpHoldsThePassword(String store, boolean starts,
            String shown) throws Exception {
        Throwable failure = null;
        String log;
        try (LogCapture capture = LogCapture.start()) {
            try (JerseyApp app = JerseyApp.start(new ResourceConfig(Resources.MethodLimited.class)
                    .register(RateLimitFeature.class)
                    .property("sluice.store", store)
                    .property("sluice.timeout", "500ms"))) {
                assertThat(app.get("/m/three", "X-Client", "c").statusCode()).isEqualTo(200); // decided, or failed open
            } catch (Exception | Error e) {
                failure = e;
            }
            log = capture.text();
        }
        if (starts) {
            assertThat(failure).as("start-up of %s", shown).isNull();
        } else {
            assertThat(failure).as("start-up of %s", shown).isNotNull();
            assertThat(LogCapture.printed(failure)).contains("'sluice.store'").contains(shown).doesNotContain(PASSWORD);
        }
        assertThat(log).doesNotContain(PASSWORD);
    }
}
