package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.internal.Keys;
import dev.sluice.spi.LimitKeys;
import dev.sluice.testing.Resp;
import dev.sluice.testing.TestCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A caller with two limits whose keys stay split between two masters (one migrated, one not yet)
 * for longer than a few quick resends: Redis answers {@code TRYAGAIN} all that time. The decision
 * is sent again while its caller waits and is decided, once, when the move ends; past its
 * deadline it is not sent again, so a caller that had its failure mode is not charged later.
 */
class ClusterSplitSlotTest {

    /** How long the keys stay split: well past what five resends 5 ms apart and doubling used to wait. */
    private static final long SPLIT_MILLIS = 1_000;

    private static TestCluster cluster;
    private static Path yaml;
    private static RedisStore store;
    private static final Map<Integer, String> IDS = new HashMap<>();

    @BeforeAll
    static void startCluster() {
        cluster = new TestCluster(3);
        yaml = cluster.redissonYaml();
        store = RedisStore.builder().connect("redisson:" + yaml).startupWait(Duration.ofSeconds(20)).localRejections(0)
                .build();
        for (int port : cluster.ports()) {
            IDS.put(port, (String) Resp.call(port, "CLUSTER", "MYID"));
        }
    }

    @AfterAll
    static void stopCluster() throws Exception {
        if (store != null) {
            store.close();
        }
        if (cluster != null) {
            cluster.close();
        }
        if (yaml != null) {
            Files.deleteIfExists(yaml);
        }
    }

    private static RateLimiter limiter(String policy, Duration timeout) {
        return RateLimiter.builder().limits(List.of(Limit.of(policy, "5/1h"),
                        Limit.of(policy + "-w", "5/1h").withAlgorithm(Algorithm.FIXED_WINDOW)))
                .store(store).failureMode(FailureMode.OPEN).timeout(timeout).build();
    }

    /** Before the fix: TRYAGAIN was sent again 5 times over about 155 ms, then the decision failed open. */
    @Test
    void aDecisionMeetingTryAgainLongerThanAFewResendsIsDecidedOnceWhenTheMoveEnds() throws Exception {
        RateLimiter limiter = limiter("split", Duration.ofSeconds(10));
        String caller = "split-" + UUID.randomUUID();
        assertThat(limiter.decide(caller).remaining()).isEqualTo(4);
        Split split = Split.begin(caller, LimitKeys.key(Keys.tag(caller), Limit.of("split", "5/1h")));
        CompletableFuture<Decision> decision;
        try {
            decision = limiter.decideAsync(caller).toCompletableFuture();
            Thread.sleep(SPLIT_MILLIS);
            assertThat(decision).as("still sent again while its keys are split").isNotDone();
        } finally {
            split.end();
        }
        Decision decided = decision.get(20, TimeUnit.SECONDS);
        assertThat(decided.outcome()).isEqualTo(Decision.Outcome.ALLOWED);
        assertThat(decided.quotas()).as("charged once, on both limits").extracting(Decision.Quota::remaining)
                .containsOnly(3L);
        assertThat(store.requestsInFlight()).isZero();
    }

    @Test
    void aDecisionStillSplitAtItsDeadlineIsNotSentAgainAfterIt() throws Exception {
        RateLimiter limiter = limiter("split-late", Duration.ofMillis(300));
        RateLimiter patient = limiter("split-late", Duration.ofSeconds(10));
        String caller = "split-late-" + UUID.randomUUID();
        assertThat(patient.decide(caller).remaining()).isEqualTo(4);
        Split split = Split.begin(caller, LimitKeys.key(Keys.tag(caller), Limit.of("split-late", "5/1h")));
        try {
            assertThat(limiter.decide(caller).outcome()).as("its timeout passed while the keys were split")
                    .isEqualTo(Decision.Outcome.FAILED_OPEN);
            Thread.sleep(200); // a resend already on its way meets the keys still split
        } finally {
            split.end();
        }
        Thread.sleep(SPLIT_MILLIS); // a resend after the deadline would now run, and charge
        assertThat(patient.decide(caller).quotas()).as("the caller that failed open was not charged")
                .extracting(Decision.Quota::remaining).containsOnly(3L);
        assertThat(store.requestsInFlight()).isZero();
    }

    /**
     * A caller's slot half moved, as a reshard leaves it between two MIGRATEs: {@code migrated},
     * one of its keys, is on the importing master, the other still on the migrating one.
     */
    private record Split(int slot, int from, int to) {

        static Split begin(String caller, String migrated) {
            int slot = ((Long) Resp.call(cluster.ports().get(0), "CLUSTER", "KEYSLOT", "{" + caller + "}")).intValue();
            int from = owner(slot);
            int to = cluster.ports().get((cluster.ports().indexOf(from) + 1) % cluster.ports().size());
            String s = Integer.toString(slot);
            Resp.call(to, "CLUSTER", "SETSLOT", s, "IMPORTING", IDS.get(from));
            Resp.call(from, "CLUSTER", "SETSLOT", s, "MIGRATING", IDS.get(to));
            Resp.call(from, "MIGRATE", "127.0.0.1", Integer.toString(to), "", "0", "5000", "KEYS", migrated);
            assertThat((List<?>) Resp.call(from, "CLUSTER", "GETKEYSINSLOT", s, "10")).as("the other key stays")
                    .hasSize(1);
            return new Split(slot, from, to);
        }

        /** Moves the rest of the slot's keys and gives the slot to the importing master, on every master. */
        void end() {
            String s = Integer.toString(slot);
            for (Object key : (List<?>) Resp.call(from, "CLUSTER", "GETKEYSINSLOT", s, "10")) {
                Resp.call(from, "MIGRATE", "127.0.0.1", Integer.toString(to), "", "0", "5000", "KEYS", (String) key);
            }
            Resp.call(to, "CLUSTER", "SETSLOT", s, "NODE", IDS.get(to));
            Resp.call(from, "CLUSTER", "SETSLOT", s, "NODE", IDS.get(to));
            for (int port : cluster.ports()) {
                if (port != from && port != to) {
                    Resp.call(port, "CLUSTER", "SETSLOT", s, "NODE", IDS.get(to));
                }
            }
        }

        /** The master that holds {@code slot}, as the first master sees it. */
        private static int owner(int slot) {
            for (String line : ((String) Resp.call(cluster.ports().get(0), "CLUSTER", "NODES")).split("\n")) {
                String[] fields = line.trim().split(" ");
                for (int i = 8; i < fields.length; i++) {
                    String range = fields[i];
                    if (range.startsWith("[")) {
                        continue; // a slot being imported or migrated
                    }
                    int dash = range.indexOf('-');
                    int low = Integer.parseInt(dash < 0 ? range : range.substring(0, dash));
                    int high = dash < 0 ? low : Integer.parseInt(range.substring(dash + 1));
                    if (low <= slot && slot <= high) {
                        String address = fields[1];
                        return Integer.parseInt(address.substring(address.indexOf(':') + 1, address.indexOf('@')));
                    }
                }
            }
            throw new IllegalStateException("no master holds slot " + slot);
        }
    }
}
