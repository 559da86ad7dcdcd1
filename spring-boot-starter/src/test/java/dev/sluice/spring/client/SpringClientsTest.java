package dev.sluice.spring.client;

import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.outbound.PermitUnavailableException;
import dev.sluice.outbound.Permits;
import dev.sluice.outbound.Priority;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * RestClient, RestTemplate and WebClient, each limited by its interceptor or filter, against a
 * provider on 127.0.0.1 that counts what arrives: never more calls arrive than the store granted,
 * a 429 with {@code Retry-After} holds the next call back, a cap on calls in flight holds. The
 * memory store; {@link SpringClientsRedisTest} shares a Redis store between clients.
 */
class SpringClientsTest {

    private final FakeProvider provider = new FakeProvider();
    private final ExecutorService callers = Executors.newFixedThreadPool(16);

    @AfterEach
    void stop() {
        callers.shutdownNow();
        provider.close();
    }

    /**
     * Sixteen calls at once against five per second (burst five), each waiting at most 300 ms: every
     * call either arrives or fails with {@link PermitUnavailableException}; what arrives is never
     * more than the limiter granted, nor than the limit allows over the time the calls took.
     */
    @ParameterizedTest
    @EnumSource(Clients.class)
    void neverMoreCallsArriveThanTheStoreGranted(Clients kind) throws Exception {
        AtomicInteger granted = new AtomicInteger();
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("provider", 5, Duration.ofSeconds(1)).withBurst(5))
                .listener((decision, nanos) -> {
                    if (decision.allowed()) {
                        granted.incrementAndGet();
                    }
                }).build();
        Clients.Caller caller = kind.limited(Permits.of(limiter, Duration.ofMillis(300)), "provider", provider.url());
        Outcomes outcomes = callAtOnce(caller, "/granted/", 16);
        List<String> arrived = provider.arrivedUnder("/granted/");
        assertThat(outcomes.ok + outcomes.unavailable).as("each call arrived or had no permit").isEqualTo(16);
        assertThat(arrived).as("the calls that had a permit, and only they, arrived").hasSize(outcomes.ok);
        assertThat(arrived.size()).as("arrived, at most granted").isLessThanOrEqualTo(granted.get());
        long periods = 1 + TimeUnit.NANOSECONDS.toSeconds(outcomes.nanos);
        assertThat((long) arrived.size()).as("at most the burst and five per second begun")
                .isLessThanOrEqualTo(5 + 5 * periods);
    }

    /**
     * The provider answers 429 with {@code Retry-After: 3}: the key is paused for three seconds, so
     * the next call, which may wait only half a second, is not sent.
     */
    @ParameterizedTest
    @EnumSource(Clients.class)
    void a429WithRetryAfterHoldsTheNextCallBack(Clients kind) {
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("provider", 100, Duration.ofSeconds(1))).build();
        Clients.Caller caller = kind.limited(Permits.of(limiter, Duration.ofMillis(500)), "provider", provider.url());
        assertThat(caller.call("/paused/429-3")).isEqualTo(429);
        PermitUnavailableException refused = unavailable(() -> caller.call("/paused/next"));
        assertThat(refused.retryAfter()).as("the pause asked for, less the time since")
                .isGreaterThan(Duration.ofSeconds(1));
        assertThat(provider.arrivedUnder("/paused/")).containsExactly("/paused/429-3");
    }

    /**
     * One call in flight at most: four calls at once, the provider holding the first until the test
     * lets it go; one at a time arrives, and each gives its place back when its response is done
     * (else the next would wait out its five seconds and fail).
     */
    @ParameterizedTest
    @EnumSource(Clients.class)
    void aCapOnCallsInFlightHoldsAndEachResponseGivesItsPlaceBack(Clients kind) throws Exception {
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("provider", 1000, Duration.ofSeconds(1))).build();
        Permits permits = Permits.builder(limiter).maxWait(Duration.ofSeconds(10)).maxInFlight(1).build();
        Clients.Caller caller = kind.limited(permits, "provider", provider.url());
        List<Future<Integer>> calls = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            String path = "/capped/" + i + "/slow";
            calls.add(callers.submit(() -> caller.call(path)));
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (provider.arrivedUnder("/capped/").isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        Thread.sleep(300);   // time for a call that ignored the cap to arrive too
        assertThat(provider.arrivedUnder("/capped/")).as("one call in flight, held by the provider").hasSize(1);
        provider.letSlowOnesGo();
        for (Future<Integer> call : calls) {
            assertThat(call.get(30, TimeUnit.SECONDS)).isEqualTo(200);
        }
        assertThat(provider.arrivedUnder("/capped/")).hasSize(4);
        assertThat(provider.mostInside()).as("at most one call in flight at the provider").isEqualTo(1);
    }

    /** A request attribute that is not a {@link Priority} fails the call, naming the attribute; nothing is sent. */
    @Test
    void aPriorityAttributeThatIsNotOneFailsTheCall() {
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("provider", 100, Duration.ofSeconds(1))).build();
        Permits permits = Permits.of(limiter, Duration.ofSeconds(1));
        var client = org.springframework.web.client.RestClient.builder().baseUrl(provider.url())
                .requestInterceptor(RateLimitClientInterceptor.named(permits, "provider")).build();
        assertThatThrownBy(() -> client.get().uri("/priority/bad").attribute(RateLimitClientInterceptor.PRIORITY, "low")
                .retrieve().toBodilessEntity())
                .hasStackTraceContaining("request attribute 'dev.sluice.outbound.Priority' must be a");
        assertThat(provider.arrivedUnder("/priority/")).isEmpty();
    }

    /** A priority needs permits with priorities: refused when the interceptor or filter is made. */
    @Test
    void aPriorityWithoutAHighPriorityShareIsRefusedAtStartUp() {
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("provider", 100, Duration.ofSeconds(1))).build();
        Permits permits = Permits.of(limiter, Duration.ofSeconds(1));
        assertThatThrownBy(() -> RateLimitClientInterceptor.byHost(permits).withPriority(Priority.LOW))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("highPriorityShare");
        assertThatThrownBy(() -> RateLimitExchangeFilter.byHost(permits).withPriority(Priority.LOW))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("highPriorityShare");
    }

    /** How calls made at once ended, and how long they took together. */
    record Outcomes(int ok, int unavailable, long nanos) {
    }

    private Outcomes callAtOnce(Clients.Caller caller, String prefix, int n) throws Exception {
        List<Future<Integer>> calls = new ArrayList<>();
        long started = System.nanoTime();
        for (int i = 0; i < n; i++) {
            String path = prefix + i;
            calls.add(callers.submit(() -> {
                try {
                    return caller.call(path);
                } catch (RuntimeException e) {
                    unavailableIn(e);
                    return -1;
                }
            }));
        }
        int ok = 0;
        int unavailable = 0;
        for (Future<Integer> call : calls) {
            int status = call.get(60, TimeUnit.SECONDS);
            assertThat(status).isIn(200, -1);
            if (status == 200) {
                ok++;
            } else {
                unavailable++;
            }
        }
        return new Outcomes(ok, unavailable, System.nanoTime() - started);
    }

    /** The {@link PermitUnavailableException} {@code call} fails with, however the client wraps it. */
    static PermitUnavailableException unavailable(Runnable call) {
        try {
            call.run();
        } catch (RuntimeException e) {
            return unavailableIn(e);
        }
        throw new AssertionError("the call was sent, expected PermitUnavailableException");
    }

    static PermitUnavailableException unavailableIn(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof PermitUnavailableException unavailable) {
                return unavailable;
            }
        }
        throw new AssertionError("expected PermitUnavailableException", failure);
    }
}
