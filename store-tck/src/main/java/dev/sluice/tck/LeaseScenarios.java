package dev.sluice.tck;

import dev.sluice.ConcurrencyLimiter;
import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.Lease;
import dev.sluice.Limit;
import dev.sluice.spi.RateLimitStore;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static dev.sluice.tck.RateLimitStoreKit.assertWithinTheLimit;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Concurrency leases: a cap on requests in flight, a returned lease admitting the next, a lease
 * left behind expiring, and a cap or lease changed while callers hold leases.
 */
abstract class LeaseScenarios extends Scenarios {

    LeaseScenarios(RateLimitStoreKit kit) {
        super(kit);
    }

    private static final Limit THREE_IN_FLIGHT = Limit.concurrency("in-flight", 3, Duration.ofSeconds(100));

    private ConcurrencyLimiter concurrency(RateLimitStore store) {
        return ConcurrencyLimiter.builder().limit(THREE_IN_FLIGHT).store(store).timeout(PATIENT).build();
    }

    private static void assertLease(Lease lease, boolean held, long remaining, double next, double retry,
            String where) {
        Decision d = lease.decision();
        assertThat(d.storeFailed()).as(where + ": store failed").isFalse();
        assertThat(lease.held()).as(where + ": held").isEqualTo(held);
        assertThat(d.allowed()).as(where + ": allowed").isEqualTo(held);
        assertThat(d.remaining()).as(where + ": remaining").isEqualTo(remaining);
        assertThat(d.binding().nextUnit()).as(where + ": next").isEqualTo(seconds(next));
        assertThat(d.retryAfter()).as(where + ": retry-after").isEqualTo(seconds(retry));
    }

    @Test
    void leasesCapRequestsInFlightAndAReturnedLeaseAdmitsTheNext() {
        ManualClock clock = new ManualClock();
        long start = clock.nowMicros();
        ConcurrencyLimiter limiter = concurrency(newStore(clock));
        String caller = "lease-" + UUID.randomUUID();
        Lease first = limiter.acquire(caller);
        assertLease(first, true, 2, 100, 0, "first");
        clock.set(start + 10_000_000);
        Lease second = limiter.acquire(caller);
        assertLease(second, true, 1, 90, 0, "second");
        assertThat(second.decision().reset()).as("until the last lease expires").isEqualTo(Duration.ofSeconds(100));
        Lease third = limiter.acquire(caller);
        assertLease(third, true, 0, 90, 0, "third");
        Lease fourth = limiter.acquire(caller);
        assertLease(fourth, false, 0, 90, 1, "fourth: refused, retry at most 1 s");
        assertThat(limiter.acquire("lease-other-" + UUID.randomUUID()).held()).as("another caller").isTrue();

        fourth.release(); // holds nothing: returns nothing
        assertLease(limiter.acquire(caller), false, 0, 90, 1, "still three held");
        first.release();
        first.release(); // once only
        Lease fifth = limiter.acquire(caller);
        assertLease(fifth, true, 0, 100, 0, "the returned place");
        assertLease(limiter.acquire(caller), false, 0, 100, 1, "full again");
    }

    @Test
    void aLeaseLeftBehindExpiresAfterTheLease() {
        ManualClock clock = new ManualClock();
        long start = clock.nowMicros();
        RateLimitStore store = newStore(clock);
        String caller = "lease-dead-" + UUID.randomUUID();
        ConcurrencyLimiter dead = concurrency(store);
        for (int i = 0; i < 3; i++) {
            clock.set(start + i * 1_000_000L);
            assertThat(dead.acquire(caller).held()).isTrue();
        }
        ConcurrencyLimiter next = concurrency(store);
        clock.set(start + 99_999_999);
        assertLease(next.acquire(caller), false, 0, 0.000001, 0.000001, "just before the first lease expires");
        clock.set(start + 100_000_000);
        assertLease(next.acquire(caller), true, 0, 1, 0, "the first lease expired");
        clock.set(start + 250_000_000);
        Lease all = next.acquire(caller);
        assertLease(all, true, 2, 100, 0, "every lease expired");
        all.release();
        assertLease(next.acquire(caller), true, 2, 100, 0, "returned");
    }

    @Test
    void aClockGoingBackwardsHoldsLeasesNoLongerThanTheLease() {
        ManualClock clock = new ManualClock();
        ConcurrencyLimiter limiter = concurrency(newStore(clock));
        String caller = "lease-backwards-" + UUID.randomUUID();
        for (int i = 0; i < 3; i++) {
            assertThat(limiter.acquire(caller).held()).isTrue();
        }
        clock.advance(Duration.ofSeconds(-3_600));
        Lease refused = limiter.acquire(caller);
        assertLease(refused, false, 0, 100, 1, "an hour back: the leases expire one lease from now at the latest");
        assertWithinTheLimit(refused.decision(), THREE_IN_FLIGHT, "an hour back");
        clock.advance(Duration.ofSeconds(100));
        assertLease(limiter.acquire(caller), true, 2, 100, 0, "one lease later on the slower clock");
    }

    // cap changes: a redeploy with another limit or lease, while callers hold leases

    private ConcurrencyLimiter cap(RateLimitStore store, long count, long leaseSeconds) {
        return ConcurrencyLimiter.builder()
                .limit(Limit.concurrency("in-flight", count, Duration.ofSeconds(leaseSeconds)))
                .store(store).failureMode(FailureMode.CLOSED).timeout(PATIENT).build();
    }

    /** Takes a lease of {@code caller} at {@code at} seconds from {@code start}; it must be granted. */
    private static Lease take(ConcurrencyLimiter limiter, ManualClock clock, long start, double at, String caller) {
        clock.set(start + Math.round(at * 1_000_000));
        Lease lease = limiter.acquire(caller);
        assertThat(lease.held()).as("a lease taken at %s s under %s", at, limiter.limit()).isTrue();
        return lease;
    }

    /** A cap or a lease changed while callers hold leases. */
    @Nested
    @Needs(Capability.CHANGED_LIMITS)
    @DisplayName("changed caps and leases (CHANGED_LIMITS)")
    class ChangedCaps {

        @Test
        void aLoweredCapRefusesCallersOverItUntilTheirLeasesComeBack() {
            ManualClock clock = new ManualClock();
            long start = clock.nowMicros();
            RateLimitStore store = newStore(clock);
            String caller = "cap-lowered-" + UUID.randomUUID();
            ConcurrencyLimiter five = cap(store, 5, 100);
            List<Lease> held = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                held.add(take(five, clock, start, i, caller)); // expiring at 100, 101, 102, 103, 104 s
            }
            ConcurrencyLimiter two = cap(store, 2, 100);
            clock.set(start + 10_000_000);
            // five held under a cap of two: a place comes back when the fourth-oldest lease expires (103 s)
            for (int i = 0; i < 2 * 5; i++) {
                Lease over = two.acquire(caller);
                assertThat(over.decision().outcome()).as("over the lowered cap, attempt %d", i)
                        .isEqualTo(Decision.Outcome.REJECTED);
                assertLease(over, false, 0, 93, 1, "five held under a cap of two, attempt " + i);
                assertWithinTheLimit(over.decision(), two.limit(), "five held under a cap of two");
            }
            assertThat(two.storeFailures()).as("refusals over a lowered cap are no store failures").isZero();
            assertThat(two.acquire("cap-other-" + UUID.randomUUID()).decision().outcome())
                    .as("another caller, after ten refusals over the cap: the circuit is closed")
                    .isEqualTo(Decision.Outcome.ALLOWED);
            held.get(3).release();
            held.get(4).release();
            assertLease(two.acquire(caller), false, 0, 91, 1, "three held (100, 101, 102 s): a place at 101 s");
            held.get(2).release();
            assertLease(two.acquire(caller), false, 0, 90, 1, "two held: full");
            held.get(1).release();
            Lease fits = two.acquire(caller);
            assertLease(fits, true, 0, 90, 0, "one held: a place under the new cap");
            assertThat(fits.decision().reset()).as("until the last lease expires").isEqualTo(Duration.ofSeconds(100));
            assertLease(two.acquire(caller), false, 0, 90, 1, "full under the new cap");
            assertThat(two.storeFailures()).isZero();
        }

        @Test
        void aLoweredCapCountsTheLeasesTakenUnderTheOldOneUntilTheyExpire() {
            ManualClock clock = new ManualClock();
            long start = clock.nowMicros();
            RateLimitStore store = newStore(clock);
            String caller = "cap-expiring-" + UUID.randomUUID();
            ConcurrencyLimiter five = cap(store, 5, 100);
            for (int i = 0; i < 5; i++) {
                take(five, clock, start, i, caller); // never returned: an instance that died mid-request
            }
            ConcurrencyLimiter two = cap(store, 2, 100);
            clock.set(start + 101_500_000);
            assertLease(two.acquire(caller), false, 0, 1.5, 1, "three left (102, 103, 104 s): a place at 103 s");
            clock.set(start + 102_500_000);
            assertLease(two.acquire(caller), false, 0, 0.5, 0.5, "two left (103, 104 s) under a cap of two");
            clock.set(start + 103_000_000);
            assertLease(two.acquire(caller), true, 0, 1, 0, "one left: a place");
            assertThat(two.storeFailures()).isZero();
        }

        @Test
        void aRaisedCapAdmitsAtOnceCountingTheLeasesHeld() {
            ManualClock clock = new ManualClock();
            long start = clock.nowMicros();
            RateLimitStore store = newStore(clock);
            String caller = "cap-raised-" + UUID.randomUUID();
            ConcurrencyLimiter two = cap(store, 2, 100);
            Lease first = take(two, clock, start, 0, caller);
            take(two, clock, start, 1, caller);
            assertLease(two.acquire(caller), false, 0, 99, 1, "full under a cap of two");
            ConcurrencyLimiter five = cap(store, 5, 100);
            clock.set(start + 2_000_000);
            assertLease(five.acquire(caller), true, 2, 98, 0, "two held under a cap of five");
            assertLease(five.acquire(caller), true, 1, 98, 0, "three held");
            assertLease(five.acquire(caller), true, 0, 98, 0, "four held");
            assertLease(five.acquire(caller), false, 0, 98, 1, "five held: full");
            first.release();
            assertLease(five.acquire(caller), true, 0, 99, 0, "the returned place");
            assertThat(five.storeFailures()).isZero();
        }

        @Test
        void aShortenedLeaseBoundsTheLeasesAlreadyHeldAndALengthenedOneExtendsNone() {
            ManualClock clock = new ManualClock();
            long start = clock.nowMicros();
            RateLimitStore store = newStore(clock);
            String caller = "lease-shortened-" + UUID.randomUUID();
            ConcurrencyLimiter hundred = cap(store, 3, 100);
            take(hundred, clock, start, 0, caller);
            take(hundred, clock, start, 0, caller);
            // under a lease of 10 s, the leases taken under 100 s expire at the latest 10 s from now
            ConcurrencyLimiter ten = cap(store, 3, 10);
            clock.set(start + 5_000_000);
            Lease shortened = ten.acquire(caller);
            assertLease(shortened, true, 0, 10, 0, "two held, bounded to the new lease");
            assertThat(shortened.decision().reset()).isEqualTo(Duration.ofSeconds(10));
            assertWithinTheLimit(shortened.decision(), ten.limit(), "under the shortened lease");
            clock.set(start + 15_000_000);
            assertLease(ten.acquire(caller), true, 2, 10, 0, "every lease expired with the new lease");
            // a lengthened lease leaves the leases held as they were: the one taken at 15 s expires at 25 s
            clock.set(start + 20_000_000);
            Lease lengthened = hundred.acquire(caller);
            assertLease(lengthened, true, 1, 5, 0, "one held under 10 s, one new under 100 s");
            assertThat(lengthened.decision().reset()).isEqualTo(Duration.ofSeconds(100));
        }
    }
}
