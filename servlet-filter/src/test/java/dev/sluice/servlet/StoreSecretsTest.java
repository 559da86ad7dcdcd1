package dev.sluice.servlet;

import dev.sluice.testing.LogCapture;
import dev.sluice.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A password in {@code store} never reaches a log line or an exception message of the start-up,
 * whether the value is good or bad: Sluice writes it {@code redis://app:***@host:port}.
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

    /** Store values holding the password, whether the application starts, and how the logs must show it. */
    static List<Arguments> values() throws IOException {
        int port = locked.port();
        int dead = TestRedis.freePort();
        Path unterminated = Files.writeString(files.resolve("unterminated.yaml"),
                "singleServerConfig:\n  address: \"redis://127.0.0.1:" + dead + "\"\n  password: \"" + PASSWORD + "\n");
        Path unknownField = Files.writeString(files.resolve("unknown-field.yaml"),
                "singleServerConfig:\n  password: \"" + PASSWORD + "\"\n  adress: \"redis://127.0.0.1:" + dead
                + "\"\n");
        Path wrongType = Files.writeString(files.resolve("wrong-type.yaml"),
                "singleServerConfig:\n  address: \"redis://127.0.0.1:" + dead + "\"\n  database: \"" + PASSWORD
                + "\"\n");
        List<Arguments> all = new ArrayList<>();
        for (Container container : Container.selected()) {
            // The application starts: the right password, a wrong user, nobody listening.
            all.add(Arguments.of(container, "redis://:" + PASSWORD + "@127.0.0.1:" + port, true,
                    "redis://:***@127.0.0.1:" + port));
            all.add(Arguments.of(container, "redis://default:" + PASSWORD + "@127.0.0.1:" + port, true,
                    "redis://default:***@127.0.0.1:" + port));
            all.add(Arguments.of(container, "redis://app:" + PASSWORD + "@127.0.0.1:" + port + "/2", true,
                    "redis://app:***@127.0.0.1:" + port + "/2"));
            all.add(Arguments.of(container, "rediss://app:" + PASSWORD + "@127.0.0.1:" + dead, true,
                    "rediss://app:***@127.0.0.1:" + dead));
            // Deployment fails: the message names the value, without the password.
            all.add(Arguments.of(container, "redis://app:" + PASSWORD + "@127.0.0.1:99999", false,
                    "redis://app:***@127.0.0.1:99999"));
            all.add(Arguments.of(container, "redis://app:" + PASSWORD + "@127.0.0.1:6379/99", false,
                    "redis://app:***@127.0.0.1:6379/99"));
            all.add(Arguments.of(container, "redis://app:" + PASSWORD + "@ho^st:6379", false,
                    "redis://app:***@ho^st:6379"));
            all.add(Arguments.of(container, "redis://app:" + PASSWORD + "@127.0.0.1:6379?db=1", false,
                    "redis://app:***@127.0.0.1:6379?db=1"));
            all.add(Arguments.of(container, "redis//app:" + PASSWORD + "@127.0.0.1", false, "***@127.0.0.1"));
            all.add(Arguments.of(container, "mongodb://app:" + PASSWORD + "@127.0.0.1", false,
                    "mongodb://app:***@127.0.0.1"));
            all.add(Arguments.of(container, "redisson:" + unterminated, false, "redisson:" + unterminated));
            all.add(Arguments.of(container, "redisson:" + unknownField, false, "redisson:" + unknownField));
            all.add(Arguments.of(container, "redisson:" + wrongType, false, "redisson:" + wrongType));
        }
        return all;
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("values")
    void noLogLineAndNoMessageOfTheStartUpHoldsThePassword(Container container, String store, boolean starts,
                                                          String shown) throws Exception {
        TestApp app = new TestApp().filter("api", "/*", "limit", "5/1h", "store", store, "timeout", "500ms");
        Throwable failure = null;
        String log;
        try (LogCapture capture = LogCapture.start()) {
            try (var running = container.start(app)) {
                assertThat(Http.get(running.uri("/x")).statusCode()).isEqualTo(200); // decided, or failed open
            } catch (Exception e) {
                failure = e;
            }
            log = capture.text();
        }
        if (starts) {
            assertThat(failure).as("start-up of %s", shown).isNull();
            assertThat(log).contains("store " + shown);
        } else {
            assertThat(failure).as("start-up of %s", shown).isNotNull();
            String printed = LogCapture.printed(failure);
            assertThat(printed).contains("init-param 'store'").contains(shown).doesNotContain(PASSWORD);
        }
        assertThat(log).doesNotContain(PASSWORD);
    }
}
