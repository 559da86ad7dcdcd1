package dev.sluice.postgres;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.spi.StoreProvider;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The database stopped and started again on the same port and data directory: while it is down
 * each limiter answers by its failure mode, quickly; once it is back decisions resume where the
 * stored state left them.
 */
class RestartTest {

    @Test
    void decisionsFailByTheFailureModeWhileTheDatabaseIsDownAndResumeAfter() throws Exception {
        TestPostgres server = TestPostgres.own();
        Limit limit = Limit.of("restart", "5/1d");
        RateLimitStore provided = null;
        try (HikariDataSource pool = server.pool(4, null, 1_000);
             PostgresStore store = PostgresStore.builder(pool).createTable(true).sweepEvery(Duration.ZERO).build()) {
            RateLimiter closed = RateLimiter.builder().store(store).failureMode(FailureMode.CLOSED)
                    .timeout(Duration.ofSeconds(5)).limit(limit).build();
            RateLimiter open = RateLimiter.builder().store(store).failureMode(FailureMode.OPEN)
                    .timeout(Duration.ofSeconds(5)).limit(limit).build();
            assertThat(remaining(closed.decide("carol"))).isEqualTo(4);
            assertThat(remaining(open.decide("carol"))).isEqualTo(3);
            // a store opened from store=, on connections of its own that the restart breaks
            String url = server.jdbcUrl() + "?user=sluice";
            provided = StoreProvider.forStore(url).open(url);
            RateLimiter configured = RateLimiter.builder().store(provided).failureMode(FailureMode.CLOSED)
                    .timeout(Duration.ofSeconds(5)).limit(Limit.of("restart-url", "5/1d")).build();
            assertThat(remaining(configured.decide("carol"))).isEqualTo(4);

            server.stop();
            long start = System.nanoTime();
            assertThat(closed.decide("carol").outcome()).isEqualTo(Decision.Outcome.FAILED_CLOSED);
            assertThat(open.decide("carol").outcome()).isEqualTo(Decision.Outcome.FAILED_OPEN);
            assertThat(configured.decide("carol").outcome()).isEqualTo(Decision.Outcome.FAILED_CLOSED);
            assertThat(Duration.ofNanos(System.nanoTime() - start))
                    .as("three decisions on a stopped database, each bounded by the limiter's timeout")
                    .isLessThan(Duration.ofSeconds(15));

            server.start();
            Decision back = firstAnswered(closed);
            assertThat(remaining(back)).as("the state stored before the restart, less this request").isEqualTo(2);
            assertThat(remaining(firstAnswered(open))).isEqualTo(1);
            assertThat(remaining(firstAnswered(configured))).isEqualTo(3);
        } finally {
            if (provided != null) {
                provided.close();
            }
            server.destroy();
        }
    }

    /** The first decision the store answers again (the limiter's breaker may hold on a while), within 60 s. */
    private static Decision firstAnswered(RateLimiter limiter) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        Decision d = limiter.decide("carol");
        while (d.outcome() != Decision.Outcome.ALLOWED && d.outcome() != Decision.Outcome.REJECTED
                && System.nanoTime() < deadline) {
            Thread.sleep(200);
            d = limiter.decide("carol");
        }
        assertThat(d.outcome()).as("a decision within 60 s of the restart").isEqualTo(Decision.Outcome.ALLOWED);
        return d;
    }

    private static long remaining(Decision d) {
        assertThat(d.outcome()).isEqualTo(Decision.Outcome.ALLOWED);
        return d.quotas().get(0).remaining();
    }
}
