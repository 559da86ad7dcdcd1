package dev.sluice.tck;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.TimeSource;
import dev.sluice.spi.RateLimitStore;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The store contract as a test kit: a {@link RateLimitStore} extends this class, says how to
 * build itself reading a given time, and inherits every contract test, JUnit 5 {@link Nested}
 * groups by capability. Every store meets the same tables of exact decisions, so stores give
 * identical decisions for identical inputs; Sluice's own memory and Redis stores run this kit.
 *
 * <pre>{@code
 * class MyStoreKitTest extends RateLimitStoreKit {
 *     @Override
 *     protected RateLimitStore newStore(TimeSource time) {
 *         return MyStore.reading(time);
 *     }
 * }
 * }</pre>
 *
 * <p>The groups: {@code Decisions} (each rate algorithm against a table of exact answers) and
 * {@code SeveralLimits} (all or nothing) always run; {@code ChangedLimits}, {@code Refunds},
 * {@code Leases}, {@code Reservations}, {@code GivenUpSlots}, {@code Pauses}, {@code State}
 * (reset and overrides) and {@code Priorities} run when the store
 * {@linkplain #supports(Capability) supports} their {@link Capability}. For a capability it
 * leaves out, they do not run at all (nothing is reported skipped), and {@code Refusals} checks
 * the gap instead: each of its operations refuses with an {@link UnsupportedOperationException}
 * naming the store and the operation, as the SPI's defaults do, and the caller's state is as it
 * was (its next decision the one it would have had). A store that supports everything has no
 * refusals to check.
 *
 * <p>Time: all groups but {@code Priorities} move a manual clock and need a store that reads it
 * for every decision (its own clock, or its server's, must be replaceable in tests: the Redis store
 * hands the time to its scripts). {@code Priorities} runs in real time on
 * {@link #sharedInstances()}. The scenarios use periods of 100 s and more, so a store whose
 * state expires on a real clock (a TTL) keeps it through a scenario.
 *
 * <p>Each test uses its own caller identities, so one store (one server) may serve every test;
 * the kit never cleans a store, and closes only the stores of {@link #sharedInstances()}.
 */
public abstract class RateLimitStoreKit {

    /** For subclasses. */
    protected RateLimitStoreKit() {
    }

    /**
     * A store that reads {@code time} instead of its own clock. Called once per scenario; the
     * store may be new and empty or a view of state shared with earlier ones (one server): each
     * scenario uses caller identities of its own (and policy names, where it writes overrides).
     *
     * @param time the clock the test moves, in microseconds since the epoch
     * @return a store reading {@code time} for every decision
     */
    protected abstract RateLimitStore newStore(TimeSource time);

    /**
     * Whether the store does what {@code capability} names: the tests that need it run if so;
     * otherwise the store must refuse it clearly, and the kit checks that instead. Every
     * capability by default. The kit may ask an instance of the test class made only for the
     * question, before any test runs: answer from the class, not from state a test sets up.
     *
     * @param capability a part of the contract a store may leave out
     * @return true if the tests of {@code capability} must run; false if it must be refused
     */
    protected boolean supports(Capability capability) {
        return true;
    }

    /**
     * Three stores sharing one state on their real clocks, as three application instances would,
     * each with its own connection where the store has one. The kit closes each after its test. By
     * default one {@code newStore(TimeSource.SYSTEM)} three times.
     *
     * @return three stores (or one store three times) sharing their state
     */
    protected List<RateLimitStore> sharedInstances() {
        RateLimitStore store = newStore(TimeSource.SYSTEM);
        return List.of(store, store, store);
    }

    /**
     * Asserts a decision that {@code limit} could give on its own: nothing granted or withheld
     * beyond it. The next unit is to come exactly when the budget is not whole, and never later
     * than the whole budget's restore.
     *
     * @param d     the decision
     * @param limit the limit it was decided under
     * @param where what to name in a failure's message
     */
    public static void assertWithinTheLimit(Decision d, Limit limit, String where) {
        for (Decision.Quota q : d.quotas()) {
            assertThat(q.remaining()).as(where + ": remaining").isBetween(0L, q.limit().capacity());
            assertThat(q.reset()).as(where + ": reset").isBetween(Duration.ZERO, fullRestore(q.limit()));
            assertThat(q.retryAfter()).as(where + ": retry-after").isBetween(Duration.ZERO, fullRestore(q.limit()));
            assertThat(q.nextUnit()).as(where + ": next unit").isBetween(Duration.ZERO, fullRestore(q.limit()));
            assertThat(q.nextUnit().isZero()).as(where + ": no next unit exactly when the budget is whole (remaining "
                    + q.remaining() + ", next unit " + q.nextUnit() + ")")
                    .isEqualTo(q.remaining() == q.limit().capacity());
        }
        assertThat(d.retryAfter()).as(where + ": retry-after").isBetween(Duration.ZERO, fullRestore(limit));
    }

    /**
     * The longest time a limit can need to restore its whole budget, from any state.
     *
     * @param limit a limit
     * @return its longest restore, rounded up to whole microseconds
     */
    public static Duration fullRestore(Limit limit) {
        return switch (limit.algorithm()) {
            // burst tokens at count per period, rounded up to whole microseconds
            case TOKEN_BUCKET, GCRA -> Duration.ofNanos(
                    -Math.floorDiv(-limit.burst() * limit.periodMicros(), limit.count()) * 1_000);
            case SLIDING_WINDOW -> limit.period().multipliedBy(2);
            case FIXED_WINDOW, SLIDING_LOG -> limit.period();
            // a lease held lives at most the lease
            case CONCURRENCY -> limit.period();
        };
    }

    // The groups: each a Nested class of this kit (so that a subclass inherits it), its tests in
    // its own file. They are not public: a store's test names only this class.

    @Nested
    @DisplayName("decisions, per algorithm")
    class Decisions extends DecisionScenarios {
        Decisions() {
            super(RateLimitStoreKit.this);
        }
    }

    @Nested
    @DisplayName("several limits at once")
    class SeveralLimits extends SeveralLimitScenarios {
        SeveralLimits() {
            super(RateLimitStoreKit.this);
        }
    }

    @Nested
    @Needs(Capability.CHANGED_LIMITS)
    @DisplayName("changed limits (CHANGED_LIMITS)")
    class ChangedLimits extends ChangedLimitScenarios {
        ChangedLimits() {
            super(RateLimitStoreKit.this);
        }
    }

    @Nested
    @Needs(Capability.REFUNDS)
    @DisplayName("refunds (REFUNDS)")
    class Refunds extends RefundScenarios {
        Refunds() {
            super(RateLimitStoreKit.this);
        }
    }

    @Nested
    @Needs(Capability.LEASES)
    @DisplayName("concurrency leases (LEASES)")
    class Leases extends LeaseScenarios {
        Leases() {
            super(RateLimitStoreKit.this);
        }
    }

    @Nested
    @Needs(Capability.RESERVATIONS)
    @DisplayName("reservations (RESERVATIONS)")
    class Reservations extends ReservationScenarios {
        Reservations() {
            super(RateLimitStoreKit.this);
        }
    }

    @Nested
    @Needs({Capability.RESERVATIONS, Capability.GIVE_BACK})
    @DisplayName("given-up slots (GIVE_BACK)")
    class GivenUpSlots extends GivenUpSlotScenarios {
        GivenUpSlots() {
            super(RateLimitStoreKit.this);
        }
    }

    @Nested
    @Needs(Capability.PAUSES)
    @DisplayName("pauses (PAUSES)")
    class Pauses extends PauseScenarios {
        Pauses() {
            super(RateLimitStoreKit.this);
        }
    }

    @Nested
    @DisplayName("reset and overrides (RESETS, OVERRIDES)")
    class State extends StateScenarios {
        State() {
            super(RateLimitStoreKit.this);
        }
    }

    @Nested
    @DisplayName("refusals of what the store leaves out")
    class Refusals extends RefusalScenarios {
        Refusals() {
            super(RateLimitStoreKit.this);
        }
    }

    @Nested
    @Needs(Capability.RESERVATIONS)
    @DisplayName("priorities, in real time (RESERVATIONS)")
    class Priorities extends PriorityScenarios {
        Priorities() {
            super(RateLimitStoreKit.this);
        }
    }
}
