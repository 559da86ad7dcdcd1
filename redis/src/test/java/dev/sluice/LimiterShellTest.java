package dev.sluice;

import dev.sluice.redis.RedisStore;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.testing.StallingProxy;
import dev.sluice.testing.Stores;
import dev.sluice.testing.TestRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.LongSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Both limiters wait on a stalled Redis through one shell: each call waits the timeout and fails
 * closed, five in a row open the circuit, an open circuit answers at once, and once Redis answers
 * again the probe closes it. One test, the same assertions, for a {@link RateLimiter} and a
 * {@link ConcurrencyLimiter}.
 */
class LimiterShellTest {

    private static final Duration TIMEOUT = Duration.ofMillis(200);
    private static final int CAP = 3;

    /** One limiter of each kind, seen through what the shell gives them alike. */
    enum Kind {
        RATE {
            @Override
            Limiter build(RateLimitStore store) {
                RateLimiter limiter = RateLimiter.builder().limit(Limit.of("shell-rate", "1000/1h")).store(store)
                        .failureMode(FailureMode.CLOSED).timeout(TIMEOUT).build();
                return new Limiter(limiter::decide, limiter::storeCircuitOpen, limiter::storeFailures);
            }
        },
        CONCURRENCY {
            @Override
            Limiter build(RateLimitStore store) {
                ConcurrencyLimiter limiter = ConcurrencyLimiter.builder()
                        .limit(Limit.concurrency("shell-cap", CAP, Duration.ofHours(1))).store(store)
                        .failureMode(FailureMode.CLOSED).timeout(TIMEOUT).build();
                return new Limiter(caller -> {
                    Lease lease = limiter.acquire(caller);
                    lease.release(); // a place taken by the test is given back at once
                    return lease.decision();
                }, limiter::storeCircuitOpen, limiter::storeFailures);
            }
        };

        abstract Limiter build(RateLimitStore store);
    }

    /** What a test asks of either limiter: one decision, the circuit, the failures counted. */
    record Limiter(Function<String, Decision> decide, BooleanSupplier circuit, LongSupplier failed) {
        Decision take(String caller) {
            return decide.apply(caller);
        }

        boolean circuitOpen() {
            return circuit.getAsBoolean();
        }

        long failures() {
            return failed.getAsLong();
        }
    }

    private static RedissonClient client(String url) {
        Config config = new Config();
        config.setNettyThreads(2);
        config.useSingleServer().setAddress(url).setTimeout(5_000).setRetryAttempts(0)
                .setConnectionMinimumIdleSize(2).setConnectionPoolSize(2)
                .setSubscriptionConnectionMinimumIdleSize(0).setSubscriptionConnectionPoolSize(1);
        return Redisson.create(config);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Kind.class)
    void aStalledRedisTimesOutThenOpensTheCircuitAndTheProbeClosesIt(Kind kind) throws Exception {
        try (StallingProxy proxy = new StallingProxy(TestRedis.shared().port())) {
            RedissonClient stalled = client(proxy.url());
            try {
                RedisStore store = RedisStore.of(stalled);
                // connected with no deadline to speak of, on a busy machine
                assertThat(RateLimiter.builder().limit(Limit.of("shell-connect", "1000/1s")).store(store)
                        .timeout(Stores.PATIENT).build().decide("connect-" + UUID.randomUUID()).allowed()).isTrue();
                Limiter limiter = kind.build(store);
                String caller = "shell-" + UUID.randomUUID();

                proxy.stall();
                long opened = 0;
                for (int i = 0; i < CircuitBreaker.THRESHOLD; i++) {
                    assertThat(limiter.circuitOpen()).as("open before failure %d", i + 1).isFalse();
                    opened = System.nanoTime();
                    Decision decision = limiter.take(caller);
                    long waited = System.nanoTime() - opened;
                    assertThat(decision.outcome()).isEqualTo(Decision.Outcome.FAILED_CLOSED);
                    assertThat(decision.retryAfter()).isEqualTo(StoreResilience.FAILED_CLOSED_RETRY);
                    assertThat(waited).as("waited the timeout").isGreaterThanOrEqualTo(TIMEOUT.toNanos());
                }
                assertThat(limiter.circuitOpen()).as("five failures in a row open the circuit").isTrue();
                assertThat(limiter.failures()).isEqualTo(CircuitBreaker.THRESHOLD);

                long asked = System.nanoTime();
                assertThat(limiter.take(caller).outcome()).isEqualTo(Decision.Outcome.FAILED_CLOSED);
                long answered = System.nanoTime();
                if (asked - opened < TimeUnit.MILLISECONDS.toNanos(200)) {
                    // within the breaker's first 250 ms pause no probe passes (a stalled test machine may see one)
                    assertThat(answered - asked).as("an open circuit does not wait").isLessThan(TIMEOUT.toNanos());
                }
                assertThat(limiter.failures()).isEqualTo(CircuitBreaker.THRESHOLD + 1);

                proxy.release();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                Decision probed = limiter.take(caller);
                while (probed.storeFailed() && System.nanoTime() < deadline) {
                    Thread.sleep(100); // bounded: past a pause of the breaker, the next call is its probe
                    probed = limiter.take(caller);
                }
                assertThat(probed.outcome()).as("the probe reached Redis again").isEqualTo(Decision.Outcome.ALLOWED);
                assertThat(limiter.circuitOpen()).as("its answer closed the circuit").isFalse();
            } finally {
                proxy.release();
                stalled.shutdown();
            }
        }
    }

    /** A lease granted after its caller stopped waiting is given back once its answer arrives. */
    @Test
    void leasesGrantedAfterTheTimeoutAreReturned() throws Exception {
        try (StallingProxy proxy = new StallingProxy(TestRedis.shared().port())) {
            RedissonClient stalled = client(proxy.url());
            try {
                RedisStore store = RedisStore.of(stalled);
                ConcurrencyLimiter limiter = ConcurrencyLimiter.builder()
                        .limit(Limit.concurrency("shell-late", CAP, Duration.ofHours(1))).store(store)
                        .failureMode(FailureMode.CLOSED).timeout(TIMEOUT).build();
                ConcurrencyLimiter patient = ConcurrencyLimiter.builder()
                        .limit(Limit.concurrency("shell-late", CAP, Duration.ofHours(1))).store(store)
                        .timeout(Stores.PATIENT).build();
                String caller = "late-" + UUID.randomUUID();
                patient.acquire(caller).release(); // connected
                proxy.stall();
                for (int i = 0; i < CAP; i++) {
                    assertThat(limiter.acquire(caller).decision().outcome()).isEqualTo(Decision.Outcome.FAILED_CLOSED);
                }
                proxy.release(); // Redis granted all three: each comes back once its answer arrives
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                boolean whole = false;
                while (!whole && System.nanoTime() < deadline) {
                    List<Lease> taken = new ArrayList<>();
                    for (int i = 0; i < CAP; i++) {
                        taken.add(patient.acquire(caller));
                    }
                    whole = taken.stream().allMatch(Lease::held);
                    taken.forEach(Lease::release);
                    if (!whole) {
                        Thread.sleep(50); // bounded by the deadline
                    }
                }
                assertThat(whole).as("all %d places free again", CAP).isTrue();
            } finally {
                proxy.release();
                stalled.shutdown();
            }
        }
    }
}
