package dev.sluice.web.internal;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;

/** The partition key of a caller is hashed once while it stays in a small cache bounded in entries and in size. */
class PartitionKeysTest {

    @Test
    void aRepeatedCallerIsNotHashedAgain() {
        String caller = "key~repeated-caller";
        String pk = PartitionKeys.of(caller);
        // A caller's key is a new String per request: equal, not the same instance.
        assertThat(PartitionKeys.of(new String(caller))).isSameAs(pk);
    }

    @Test
    void theKeyIsTheFirstTwelveBytesOfTheMacInStandardBase64() {
        java.util.Random random = new java.util.Random(26);
        for (int i = 0; i < 1_000; i++) {
            byte[] mac = new byte[32];
            random.nextBytes(mac);
            assertThat(PartitionKeys.encode(mac))
                    .isEqualTo(":" + java.util.Base64.getEncoder().encodeToString(java.util.Arrays.copyOf(mac, 12))
                            + ":");
        }
    }

    @Test
    void callersWhoseHashCodesCollideKeepTheirOwnKeys() {
        // "Aa" and "BB" have one String.hashCode, and so have these two: they compete for one slot.
        String a = "key~Aa";
        String b = "key~BB";
        assertThat(a.hashCode()).isEqualTo(b.hashCode());
        String pkA = PartitionKeys.of(a);
        String pkB = PartitionKeys.of(b);
        assertThat(pkA).isNotEqualTo(pkB);
        for (int i = 0; i < 100; i++) {
            assertThat(PartitionKeys.of(i % 2 == 0 ? a : b)).isEqualTo(i % 2 == 0 ? pkA : pkB);
        }
        assertThat(PartitionKeys.of(a)).isEqualTo(PartitionKeys.hash(a));
        assertThat(PartitionKeys.of(b)).isEqualTo(PartitionKeys.hash(b));
    }

    @Test
    void rotatingCallersNeverGrowTheCacheBeyondItsBound() {
        String padding = "x".repeat(PartitionKeys.MAX_CACHED_LENGTH - 20);
        for (int i = 0; i < 20 * PartitionKeys.SLOTS; i++) {
            PartitionKeys.of("key~" + i + padding);
        }
        assertThat(PartitionKeys.cachedEntries()).isLessThanOrEqualTo(PartitionKeys.SLOTS);
        assertThat(PartitionKeys.cachedChars())
                .isLessThanOrEqualTo((long) PartitionKeys.SLOTS * PartitionKeys.MAX_CACHED_LENGTH);
    }

    @Test
    void aLongCallerKeyIsHashedEveryTimeAndNotKept() {
        String caller = "key~" + "y".repeat(PartitionKeys.MAX_CACHED_LENGTH);
        String pk = PartitionKeys.of(caller);
        assertThat(PartitionKeys.of(caller)).isEqualTo(pk).isNotSameAs(pk);
        assertThat(PartitionKeys.cachedChars())
                .isLessThanOrEqualTo((long) PartitionKeys.SLOTS * PartitionKeys.MAX_CACHED_LENGTH);
    }

    @Test
    void threadsRacingForOneSlotEachGetTheirOwnCallersKey() throws Exception {
        // Four callers of one hashCode: "AaAa", "AaBB", "BBAa", "BBBB".
        List<String> callers = List.of("key~AaAa", "key~AaBB", "key~BBAa", "key~BBBB");
        List<String> expected = callers.stream().map(PartitionKeys::hash).toList();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<Integer>> wrong = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int offset = t;
                wrong.add(pool.submit(() -> {
                    int mismatches = 0;
                    for (int i = 0; i < 20_000; i++) {
                        int c = (i + offset) % callers.size();
                        if (!PartitionKeys.of(callers.get(c)).equals(expected.get(c))) {
                            mismatches++;
                        }
                    }
                    return mismatches;
                }));
            }
            for (Future<Integer> w : wrong) {
                assertThat(w.get()).isZero();
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
