package dev.sluice.postgres;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Three application instances (three stores, each on its own pool) and twelve threads deciding
 * for one caller at once: the store admits exactly the limit, whoever wins each race.
 */
class ConcurrentInstancesTest {

    private static final int THREADS = 12;
    private static final int REQUESTS = 120;

    private static final List<HikariDataSource> POOLS = new ArrayList<>();
    private static final List<PostgresStore> STORES = new ArrayList<>();

    @BeforeAll
    static void threeInstances() {
        for (int i = 0; i < 3; i++) {
            HikariDataSource pool = TestPostgres.shared().pool(4);
            POOLS.add(pool);
            STORES.add(PostgresStore.builder(pool).createTable(true).threads(4).sweepEvery(Duration.ZERO).build());
        }
    }

    @AfterAll
    static void close() {
        STORES.forEach(PostgresStore::close);
        POOLS.forEach(HikariDataSource::close);
    }

    /** Runs {@link #REQUESTS} decisions on {@link #THREADS} threads over the three stores; the allowed ones. */
    private static List<Decision> race(String caller, List<Limit> limits) throws Exception {
        Queue<Decision> allowed = new ConcurrentLinkedQueue<>();
        Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
        AtomicInteger tickets = new AtomicInteger();
        ExecutorService threads = Executors.newFixedThreadPool(THREADS);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                PostgresStore store = STORES.get(t % STORES.size());
                done.add(threads.submit(() -> {
                    while (tickets.getAndIncrement() < REQUESTS) {
                        try {
                            Decision d = store.decide(caller, limits).toCompletableFuture().get(60, TimeUnit.SECONDS);
                            if (d.outcome() == Decision.Outcome.ALLOWED) {
                                allowed.add(d);
                            } else {
                                assertThat(d.outcome()).isEqualTo(Decision.Outcome.REJECTED);
                            }
                        } catch (Exception e) {
                            failures.add(e);
                        }
                    }
                }));
            }
            for (Future<?> f : done) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            threads.shutdownNow();
        }
        assertThat(failures).as("decisions that failed").isEmpty();
        return new ArrayList<>(allowed);
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
    void threeInstancesAdmitExactlyTheLimit(Algorithm algorithm) throws Exception {
        Limit limit = Limit.of("exact", "25/1d").withAlgorithm(algorithm);
        List<Decision> allowed = race("c-" + UUID.randomUUID(), List.of(limit));
        assertThat(allowed).hasSize(25);
        // each unit was granted once: the remaining counts seen are 24 down to 0, each once
        assertThat(allowed).extracting(d -> d.quotas().get(0).remaining())
                .containsExactlyInAnyOrder(24L, 23L, 22L, 21L, 20L, 19L, 18L, 17L, 16L, 15L, 14L, 13L, 12L, 11L,
                        10L, 9L, 8L, 7L, 6L, 5L, 4L, 3L, 2L, 1L, 0L);
    }

    @Test
    void severalLimitsAreChargedTogetherOrNotAtAll() throws Exception {
        Limit tight = Limit.of("tight", "20/1d");
        Limit wide = Limit.of("wide", "30/1d").withAlgorithm(Algorithm.FIXED_WINDOW);
        String caller = "c-" + UUID.randomUUID();
        List<Decision> allowed = race(caller, List.of(tight, wide));
        assertThat(allowed).hasSize(20);
        // the wide limit was charged only with the tight one: 10 of its 30 left
        Decision after = STORES.get(0).decide(caller, List.of(wide)).toCompletableFuture().get(30, TimeUnit.SECONDS);
        assertThat(after.outcome()).isEqualTo(Decision.Outcome.ALLOWED);
        assertThat(after.quotas().get(0).remaining()).isEqualTo(30 - 20 - 1);
    }
}
