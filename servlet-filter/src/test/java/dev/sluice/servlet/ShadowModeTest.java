package dev.sluice.servlet;

import dev.sluice.metrics.OptionalMetrics;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.net.http.HttpResponse;

import static dev.sluice.servlet.Http.get;
import static dev.sluice.servlet.Http.header;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code mode=shadow}: over-limit requests get 200 with headers showing remaining 0. And this
 * module's tests run without Micrometer on the class path: {@code metrics=true} must not break.
 */
class ShadowModeTest {

    static Iterable<Container> containers() {
        return Container.selected();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void overLimitRequestsPassWithRemainingZeroInShadowMode(Container container) throws Exception {
        TestApp app = new TestApp()
                .filter("shadow", "/shadow/*", "limit", "2/1m", "mode", "shadow", "metrics", "true")
                .filter("enforced", "/enforced/*", "limit", "2/1m", "mode", "enforce");
        try (var running = container.start(app)) {
            assertThat(header(get(running.uri("/shadow/x")), "RateLimit-Remaining")).isEqualTo("1");
            assertThat(header(get(running.uri("/shadow/x")), "RateLimit-Remaining")).isEqualTo("0");
            for (int i = 0; i < 3; i++) {
                HttpResponse<String> over = get(running.uri("/shadow/x"));
                assertThat(over.statusCode()).isEqualTo(200);
                assertThat(over.body()).isEqualTo("ok");
                assertThat(header(over, "RateLimit-Remaining")).isEqualTo("0");
                assertThat(header(over, "Retry-After")).isNull();
            }
            get(running.uri("/enforced/x"));
            get(running.uri("/enforced/x"));
            assertThat(get(running.uri("/enforced/x")).statusCode()).isEqualTo(429);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void withoutMicrometerOnTheClassPathMetricsAreQuietlyOff(Container container) throws Exception {
        assertThatThrownBy(() -> Class.forName("io.micrometer.core.instrument.MeterRegistry"))
                .isInstanceOf(ClassNotFoundException.class);
        assertThat(OptionalMetrics.available()).isFalse();
        TestApp app = new TestApp().filter("metered", "/m/*", "limit", "1/1m", "metrics", "true");
        try (var running = container.start(app)) {
            assertThat(get(running.uri("/m/x")).statusCode()).isEqualTo(200);
            assertThat(get(running.uri("/m/x")).statusCode()).isEqualTo(429);
        }
    }
}
