package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.DecisionListener;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.StoreError;
import dev.sluice.testing.Resp;
import dev.sluice.testing.TestCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SetArgs;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import org.redisson.client.codec.StringCodec;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Live resharding under load on a real Redis Cluster of three masters: while many threads decide
 * for many callers (a call's callers go out in one pipeline), the test moves the callers' slots
 * from node to node as {@code redis-cli --cluster reshard} does (SETSLOT IMPORTING and MIGRATING,
 * MIGRATE of the keys one by one, SETSLOT NODE), so that decisions meet MOVED, ASK and, for a
 * caller with two limits whose keys are half moved, TRYAGAIN. A reshard costs a retry: no decision
 * fails open or waits out its timeout, and every caller is admitted exactly its limit (nothing
 * over, nothing charged twice). Twice: on Redisson (a call's callers of one master in one pipeline),
 * then on Lettuce's cluster client (each caller's batch its own call; Lettuce follows MOVED and ASK).
 */
class ClusterReshardingTest {

    private static final int CALLERS = 120;
    private static final int LIMIT = 40;
    /** Other keys in each caller's slot, moved with its own. */
    private static final int FILLERS = 4;
    /** Far above any decision's time on loopback: a decision that waits it out is seen. */
    private static final Duration TIMEOUT = Duration.ofSeconds(3);

    private static TestCluster cluster;
    private static Path yaml;
    private static RedisStore store;
    private static RedisClusterClient lettuce;

    @BeforeAll
    static void startCluster() {
        cluster = new TestCluster(3);
        yaml = cluster.redissonYaml();
        // a cold JVM on a busy machine can take longer than the default 2 s to warm a cluster's store up
        // every decision goes to Redis (no local copy of a refusal), so every one can meet a moving slot
        store = RedisStore.builder().connect("redisson:" + yaml).startupWait(Duration.ofSeconds(20)).localRejections(0)
                .build();
        assertThat(store.ready()).isTrue();
    }

    @AfterAll
    static void stopCluster() throws Exception {
        if (store != null) {
            store.close();
        }
        if (lettuce != null) {
            lettuce.shutdown();
        }
        if (cluster != null) {
            cluster.close();
        }
        if (yaml != null) {
            Files.deleteIfExists(yaml);
        }
    }

    @Test
    void slotsMovedUnderLoadCostARetryNotAFailOpenAndEveryCallerIsAdmittedExactlyItsLimit() throws Exception {
        reshardUnderLoad(store, (caller, i) -> store.client().getBucket("filler:{" + caller + "}:" + i,
                StringCodec.INSTANCE).setAsync("x", Duration.ofHours(1)).toCompletableFuture());
    }

    @Test
    void onLettuceSlotsMovedUnderLoadCostARetryNotAFailOpenAndEveryCallerIsAdmittedExactlyItsLimit()
            throws Exception {
        List<RedisURI> nodes = new ArrayList<>();
        for (int port : cluster.ports()) {
            nodes.add(RedisURI.create("127.0.0.1", port));
        }
        lettuce = RedisClusterClient.create(nodes);
        StatefulRedisClusterConnection<String, String> fillers =
                lettuce.connect(io.lettuce.core.codec.StringCodec.UTF8);
        try (LettuceStore onLettuce = LettuceStore.builder().client(lettuce).localRejections(0)
                .startupWait(Duration.ofSeconds(20)).build()) {
            reshardUnderLoad(onLettuce, (caller, i) -> fillers.async().set("filler:{" + caller + "}:" + i, "x",
                    SetArgs.Builder.ex(Duration.ofHours(1))).toCompletableFuture());
        } finally {
            fillers.close();
        }
    }

    /** Writes filler key {@code i} in a caller's slot. */
    private interface Fillers {
        CompletableFuture<?> write(String caller, int i);
    }

    private static void reshardUnderLoad(ScriptStore store, Fillers filler) throws Exception {
        Map<String, Long> before = errorCounts("ASK", "MOVED", "TRYAGAIN");
        String run = UUID.randomUUID().toString().substring(0, 8);
        // Why a decision was made without the store: a timeout (waited it out) or a failure given up on.
        Map<StoreError, AtomicInteger> storeErrors = new ConcurrentHashMap<>();
        DecisionListener listener = new DecisionListener() {
            @Override
            public void onDecision(Decision decision, long elapsedNanos) {
            }

            @Override
            public void onStoreError(StoreError error) {
                storeErrors.computeIfAbsent(error, e -> new AtomicInteger()).incrementAndGet();
            }
        };
        // Half the callers have one limit (one key), half two (two keys of one slot: TRYAGAIN while half moved).
        RateLimiter one = RateLimiter.builder().limit(Limit.of("reshard", LIMIT, Duration.ofHours(1)))
                .store(store).failureMode(FailureMode.OPEN).timeout(TIMEOUT).listener(listener).build();
        RateLimiter two = RateLimiter.builder().limits(List.of(Limit.of("reshard", LIMIT, Duration.ofHours(1)),
                        Limit.of("reshard-w", LIMIT, Duration.ofHours(1)).withAlgorithm(Algorithm.FIXED_WINDOW)))
                .store(store).failureMode(FailureMode.OPEN).timeout(TIMEOUT).listener(listener).build();
        List<String> callers = new ArrayList<>();
        for (int c = 0; c < CALLERS; c++) {
            callers.add("reshard-" + c + "-" + run);
        }
        Map<String, AtomicInteger> admitted = new ConcurrentHashMap<>();
        Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();
        callers.forEach(caller -> {
            admitted.put(caller, new AtomicInteger());
            attempts.put(caller, new AtomicInteger());
        });
        // Keys of their own in each caller's slot make each move last longer: the caller's keys
        // are then on both nodes for a while (ASK; TRYAGAIN for two keys split), as in a real reshard.
        List<CompletableFuture<?>> fillers = new ArrayList<>();
        for (String caller : callers) {
            for (int i = 0; i < FILLERS; i++) {
                fillers.add(filler.write(caller, i));
            }
        }
        CompletableFuture.allOf(fillers.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        // Every caller has state before the move, so that its keys are there to be migrated.
        for (int c = 0; c < CALLERS; c++) {
            Decision first = (c % 2 == 0 ? one : two).decide(callers.get(c));
            assertThat(first.allowed()).isTrue();
            admitted.get(callers.get(c)).incrementAndGet();
            attempts.get(callers.get(c)).incrementAndGet();
        }

        AtomicInteger failedOpen = new AtomicInteger();
        AtomicLong slowestNanos = new AtomicLong();
        AtomicBoolean moving = new AtomicBoolean(true);
        int threads = 16;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        int moved;
        try {
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                workers.add(pool.submit(() -> {
                    ThreadLocalRandom random = ThreadLocalRandom.current();
                    // until the slots have moved and then until every caller has tried more than its limit
                    for (int i = 0; i < 200_000 && (moving.get() || !allTriedPast(attempts)); i++) {
                        int c = random.nextInt(CALLERS);
                        String caller = callers.get(c);
                        long started = System.nanoTime();
                        Decision decision = (c % 2 == 0 ? one : two).decide(caller);
                        slowestNanos.accumulateAndGet(System.nanoTime() - started, Math::max);
                        attempts.get(caller).incrementAndGet();
                        if (decision.storeFailed()) {
                            failedOpen.incrementAndGet();
                        } else if (decision.allowed()) {
                            admitted.get(caller).incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            try {
                moved = moveSlotsOf(callers);
            } finally {
                moving.set(false);
            }
            for (Future<?> worker : workers) {
                worker.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        Map<String, Long> redirections = errorCounts("ASK", "MOVED", "TRYAGAIN");
        before.forEach((error, count) -> redirections.merge(error, -count, Long::sum)); // this run's alone
        assertThat(moved).as("slots moved under load").isGreaterThan(CALLERS);
        assertThat(redirections).as("what the masters answered while slots moved")
                .hasEntrySatisfying("MOVED", count -> assertThat(count).isPositive())
                .hasEntrySatisfying("ASK", count -> assertThat(count).isPositive());
        assertThat(failedOpen.get()).as("decisions that failed open, by why (%s)", storeErrors)
                .isZero();
        assertThat(TimeUnit.NANOSECONDS.toMillis(slowestNanos.get())).as("the slowest decision, ms")
                .isLessThan(TIMEOUT.toMillis());
        Map<String, Integer> wrong = new HashMap<>();
        admitted.forEach((caller, count) -> {
            if (count.get() != LIMIT) {
                wrong.put(caller, count.get());
            }
        });
        assertThat(wrong).as("callers not admitted exactly %d", LIMIT).isEmpty();
        assertThat(store.requestsInFlight()).isZero();
    }

    /** How many of these errors the masters answered, from INFO errorstats. */
    private static Map<String, Long> errorCounts(String... errors) {
        Map<String, Long> counts = new HashMap<>();
        for (String error : errors) {
            counts.put(error, 0L);
        }
        for (int port : cluster.ports()) {
            for (String line : ((String) Resp.call(port, "INFO", "errorstats")).split("\r?\n")) {
                for (String error : errors) {
                    if (line.startsWith("errorstat_" + error + ":count=")) {
                        counts.merge(error, Long.parseLong(line.substring(line.indexOf('=') + 1).trim()), Long::sum);
                    }
                }
            }
        }
        return counts;
    }

    private static boolean allTriedPast(Map<String, AtomicInteger> attempts) {
        for (AtomicInteger count : attempts.values()) {
            if (count.get() <= LIMIT + 2) {
                return false;
            }
        }
        return true;
    }

    /**
     * Moves the slot of each caller to the next node, as a reshard does, keys one by one; then
     * back again. Returns how many slot moves were made.
     */
    private static int moveSlotsOf(List<String> callers) throws InterruptedException {
        Map<Integer, String> ids = new HashMap<>();
        for (int port : cluster.ports()) {
            ids.put(port, (String) Resp.call(port, "CLUSTER", "MYID"));
        }
        Set<Integer> slots = new LinkedHashSet<>();
        for (String caller : callers) {
            slots.add(((Long) Resp.call(cluster.ports().get(0), "CLUSTER", "KEYSLOT", "{" + caller + "}")).intValue());
        }
        int moves = 0;
        for (int pass = 0; pass < 2; pass++) {
            for (int slot : slots) {
                int from = owner(slot);
                int to = cluster.ports().get((cluster.ports().indexOf(from) + 1) % cluster.ports().size());
                move(slot, from, to, ids);
                moves++;
            }
        }
        return moves;
    }

    /**
     * The port of the master that says it owns {@code slot}, once the three agree (a node can
     * take a moment to accept a new owner); waits at most 10 s.
     */
    private static int owner(int slot) throws InterruptedException {
        for (int attempt = 0; attempt < 200; attempt++) {
            Set<Integer> claims = new HashSet<>();
            Set<Integer> views = new HashSet<>();
            for (int port : cluster.ports()) {
                for (String line : ((String) Resp.call(port, "CLUSTER", "NODES")).split("\n")) {
                    String[] fields = line.trim().split(" ");
                    int node = Integer.parseInt(fields[1].substring(fields[1].indexOf(':') + 1,
                            fields[1].indexOf('@')));
                    if (holds(fields, slot)) {
                        views.add(node);
                        if (line.contains("myself")) {
                            claims.add(node);
                        }
                    }
                }
            }
            if (claims.size() == 1 && views.equals(claims)) {
                return claims.iterator().next();
            }
            Thread.sleep(50);
        }
        StringBuilder dump = new StringBuilder();
        for (int port : cluster.ports()) {
            dump.append("\nview of ").append(port).append(":");
            for (String line : ((String) Resp.call(port, "CLUSTER", "NODES")).split("\n")) {
                String[] fields = line.trim().split(" ");
                dump.append("\n  ").append(fields[1]).append(' ').append(fields[2]).append(" epoch ").append(fields[6])
                        .append(holds(fields, slot) ? " holds it" : "")
                        .append(line.contains("[" + slot + "-") ? " (migrating or importing)" : "");
            }
        }
        throw new IllegalStateException("the masters do not agree on the owner of slot " + slot + dump);
    }

    /** Whether a line of CLUSTER NODES lists {@code slot} among its node's slots (from the ninth field). */
    private static boolean holds(String[] fields, int slot) {
        for (int i = 8; i < fields.length; i++) {
            String range = fields[i];
            if (range.startsWith("[")) {
                continue; // a slot being imported or migrated: not yet another owner's
            }
            int dash = range.indexOf('-');
            int low = Integer.parseInt(dash < 0 ? range : range.substring(0, dash));
            int high = dash < 0 ? low : Integer.parseInt(range.substring(dash + 1));
            if (low <= slot && slot <= high) {
                return true;
            }
        }
        return false;
    }

    private static void move(int slot, int from, int to, Map<Integer, String> ids) throws InterruptedException {
        String s = Integer.toString(slot);
        Resp.call(to, "CLUSTER", "SETSLOT", s, "IMPORTING", ids.get(from));
        Resp.call(from, "CLUSTER", "SETSLOT", s, "MIGRATING", ids.get(to));
        for (int round = 0; round < 1_000; round++) {
            @SuppressWarnings("unchecked")
            List<Object> keys = (List<Object>) Resp.call(from, "CLUSTER", "GETKEYSINSLOT", s, "1");
            if (keys.isEmpty()) {
                break;
            }
            Resp.call(from, "MIGRATE", "127.0.0.1", Integer.toString(to), "", "0", "5000", "KEYS",
                    (String) keys.get(0));
            Thread.sleep(1); // decisions meet the slot half moved
        }
        Resp.call(to, "CLUSTER", "SETSLOT", s, "NODE", ids.get(to));
        Resp.call(from, "CLUSTER", "SETSLOT", s, "NODE", ids.get(to));
        for (int port : cluster.ports()) {
            if (port != from && port != to) {
                Resp.call(port, "CLUSTER", "SETSLOT", s, "NODE", ids.get(to));
            }
        }
    }
}
