package dev.sluice.web;

import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.web.internal.TestRequest;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The seam answers without blocking, and fails at build time naming the parameter and the value. */
class HttpLimiterTest {

    /** A store that answers when the test says. */
    private static final class Held implements RateLimitStore {
        final CompletableFuture<Decision> answer = new CompletableFuture<>();

        @Override
        public CompletionStage<Decision> decide(String caller, List<Limit> limits) {
            return answer;
        }

        @Override
        public CompletionStage<Decision> reserve(String caller, List<Limit> limits, Duration maxWait) {
            return answer;
        }

        @Override
        public void close() {
        }
    }

    private static HttpLimiter held(Held store, FailureMode mode) {
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("held", "10/s")).store(store).failureMode(mode)
                .timeout(Duration.ofSeconds(5)).build();
        return HttpLimiter.builder("route 'held'").limiter(limiter).build();
    }

    @Test
    void checkReturnsBeforeTheStoreAnswers() throws Exception {
        Held store = new Held();
        TestRequest view = new TestRequest();
        CompletableFuture<Verdict> verdict = held(store, FailureMode.OPEN).check(view).toCompletableFuture();

        assertThat(verdict).as("the verdict while the store has not answered").isNotDone();
        store.answer.completeExceptionally(new IllegalStateException("connection refused"));
        Verdict failedOpen = verdict.get(5, TimeUnit.SECONDS);
        assertThat(failedOpen.proceeds()).isTrue();
        assertThat(failedOpen.answer().headers()).as("no rate-limit headers when failing open").isEmpty();
        assertThat(failedOpen.awaitsEnd()).isFalse();
        assertThat(view.attribute(RequestAttributes.OUTCOME)).isEqualTo("failed_open");
    }

    @Test
    void aClosedRouteWhoseStoreFailsAnswers503WithRetryAfterAndAProblem() throws Exception {
        Held store = new Held();
        store.answer.completeExceptionally(new IllegalStateException("connection refused"));
        Verdict verdict = held(store, FailureMode.CLOSED).check(new TestRequest()).toCompletableFuture()
                .get(5, TimeUnit.SECONDS);

        assertThat(verdict.proceeds()).isFalse();
        assertThat(verdict.answer().status()).isEqualTo(503);
        assertThat(verdict.answer().headers()).extracting(Answer.Header::name).containsExactly("Retry-After");
        assertThat(verdict.answer().contentType()).isEqualTo(Answer.PROBLEM_JSON);
        assertThat(verdict.answer().body()).contains("\"status\":503");
        assertThat(verdict.decision().outcome()).isEqualTo(Decision.Outcome.FAILED_CLOSED);
    }

    @Test
    void badConfigurationNamesTheParameterAndTheValue() {
        assertThatThrownBy(() -> HttpLimiter.builder("route 'x'").parameters(Map.of("limit", "100/minutes")::get)
                .build()).isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("'limit' must look like")
                .hasMessageEndingWith("got '100/minutes'");
        assertThatThrownBy(() -> HttpLimiter.requireParameter("limits")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("'limits' is not a Sluice parameter; known: ");
        assertThatThrownBy(() -> HttpLimiter.builder("route 'x'").rejections("this test", "sendError"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("got 'sendError'");
        assertThatThrownBy(() -> HttpLimiter.builder("route 'x'").parameters(Map.of("limit", "1/s", "reject",
                "send-error")::get).build()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("'reject' must be problem");
    }

    @Test
    void theEndIsReportedOnce() {
        int[] ends = new int[1];
        Verdict verdict = new Verdict(new Answer(Answer.PROCEED, List.of(), null, null), null, status -> ends[0]++);
        verdict.responseEnded(200);
        verdict.responseEnded(500);
        assertThat(verdict.awaitsEnd()).isTrue();
        assertThat(ends[0]).isEqualTo(1);
        assertThatThrownBy(() -> new Answer(429, List.of(), null, null)).isInstanceOf(IllegalArgumentException.class);
    }
}
