package dev.sluice.redis;

import dev.sluice.ConcurrencyLimiter;
import dev.sluice.Lease;
import dev.sluice.Limit;
import dev.sluice.testing.Stores;
import dev.sluice.testing.TestRedis;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Concurrency leases on a real Redis, on the Redis server's clock: an application instance that
 * dies holding leases (its Redisson client shut down, the leases never returned) blocks the next
 * instance for one lease, no longer; the key carries a TTL; three clients share one cap.
 */
class ConcurrencyLeasesTest {

    private static final Duration LEASE = Duration.ofSeconds(2);

    private static ConcurrencyLimiter limiter(RedisStore store, Limit limit) {
        return ConcurrencyLimiter.builder().limit(limit).store(store).timeout(Stores.PATIENT).build();
    }

    @Test
    void aKilledInstancesLeasesExpireAfterTheLease() throws InterruptedException {
        Limit cap = Limit.concurrency("killed", 3, LEASE);
        String caller = "killed-" + UUID.randomUUID();
        RedissonClient dying = TestRedis.shared().newClient();
        long taken = System.nanoTime();
        ConcurrencyLimiter dead = limiter(RedisStore.of(dying), cap);
        for (int i = 0; i < 3; i++) {
            assertThat(dead.acquire(caller).held()).isTrue();
        }
        dying.shutdown(); // dies mid-request: nothing is returned

        ConcurrencyLimiter next = limiter(RedisStore.of(Stores.client()), cap);
        Lease refused = next.acquire(caller);
        assertThat(refused.held()).as("the dead instance's leases still count").isFalse();
        assertThat(refused.decision().retryAfter()).isEqualTo(Duration.ofSeconds(1));
        long ttl = Stores.client().getScoredSortedSet(key(caller, cap), StringCodec.INSTANCE).remainTimeToLive();
        assertThat(ttl).as("the key's TTL, ms").isBetween(1L, LEASE.toMillis());

        Lease admitted = null;
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (admitted == null && System.nanoTime() < deadline) {
            Lease attempt = next.acquire(caller);
            if (attempt.held()) {
                admitted = attempt;
            } else {
                Thread.sleep(50); // bounded polling on the Redis server's clock
            }
        }
        long waited = System.nanoTime() - taken;
        assertThat(admitted).as("admitted once the leases expired").isNotNull();
        assertThat(Duration.ofNanos(waited)).as("not before the lease").isGreaterThanOrEqualTo(LEASE.minusMillis(20));
        assertThat(admitted.decision().remaining()).as("at least the oldest lease expired").isBetween(0L, 2L);
        admitted.release();
    }

    @Test
    void threeClientsShareOneCapExactlyAndReturnedLeasesAreGone() {
        Limit cap = Limit.concurrency("three-clients", 4, Duration.ofSeconds(30));
        String caller = "three-" + UUID.randomUUID();
        List<RedissonClient> clients = List.of(TestRedis.shared().newClient(), TestRedis.shared().newClient(),
                TestRedis.shared().newClient());
        try {
            List<ConcurrencyLimiter> instances = clients.stream().map(c -> limiter(RedisStore.of(c), cap)).toList();
            List<Lease> held = new ArrayList<>();
            int refused = 0;
            for (int i = 0; i < 12; i++) {
                Lease lease = instances.get(i % 3).acquire(caller);
                if (lease.held()) {
                    held.add(lease);
                } else {
                    refused++;
                }
            }
            assertThat(held).hasSize(4);
            assertThat(refused).isEqualTo(8);
            held.forEach(Lease::release);
            assertThat(Stores.client().getKeys().countExists(key(caller, cap))).as("an emptied set is no key").isZero();
            for (ConcurrencyLimiter instance : instances) {
                assertThat(instance.acquire(caller).held()).isTrue();
            }
        } finally {
            clients.forEach(RedissonClient::shutdown);
        }
    }

    private static String key(String caller, Limit cap) {
        return dev.sluice.internal.Keys.key(dev.sluice.internal.Keys.tag(caller), cap.policy(), "cc");
    }
}
